"""Per-layer profile of one compiled module at one thread, with the GFLOP/s of each weight matrix multiply.

`kiln bench --profile-json` times every layer; the layer list (`kiln inspect --layers`) gives each matrix
multiply's weight bytes, so K * N = bytes / 4 (fp32; the bias adds N, under 0.2%) and its FLOPs are
2 * tokens * K * N. Prints the time per layer kind, the weight matrix multiplies' overall GFLOP/s, the slowest of
them, and the other layers grouped by op:

    python3 bench/cpu/layer_gflops.py --kiln build/tools/kiln/kiln --module vit.kiln \
        --inputs /work/models/vit_b_16/io_0.npz --tokens 197
"""
import argparse
import collections
import json
import re
import subprocess
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument('--kiln', required=True)
ap.add_argument('--module', required=True)
ap.add_argument('--inputs', required=True)
ap.add_argument('--tokens', type=int, required=True, help='rows of every weight matrix multiply (batch x sequence)')
ap.add_argument('--iters', default='5')
ap.add_argument('--threads', default='1')
a = ap.parse_args()

with tempfile.NamedTemporaryFile(suffix='.json') as f:
    subprocess.run([a.kiln, 'bench', a.module, '--inputs', a.inputs, '--threads', a.threads, '--iters', a.iters,
                    '--warmup', '1', '--profile-json', f.name], check=True, capture_output=True)
    prof = json.load(open(f.name))
layers = subprocess.run([a.kiln, 'inspect', a.module, '--layers'], check=True, capture_output=True, text=True).stdout
weight_bytes = {}
for line in layers.splitlines():
    fields = line.split()
    if 'weights' in fields:
        weight_bytes[fields[0]] = int(fields[fields.index('weights') + 1])

print('%s: %.1f ms per run (layers %.1f)' % (a.module, prof['wall_ms_per_run'], prof['layers_ms_per_run']))
for k in prof['kinds']:
    print('  %-18s %3d layers %8.2f ms' % (k['kind'], k['layers'], k['ms_per_run']))
rates, mm_ms, mm_flop, others = [], 0.0, 0.0, collections.defaultdict(lambda: [0, 0.0])
for l in prof['layers']:
    name = l['name'].split('/', 1)[1]
    if l['kind'] == 'matrix_multiply' and name in weight_bytes:
        flop = 2.0 * a.tokens * weight_bytes[name] / 4
        rates.append((flop / l['ms_per_run'] / 1e6, l['ms_per_run'], name))
        mm_ms += l['ms_per_run']
        mm_flop += flop
    else:
        op = re.sub(r'(_\d+)+$', '', name.split('/')[0]) + ' ' + l['kind'] + ' ' + l['tactic']
        others[op][0] += 1
        others[op][1] += l['ms_per_run']
if rates:
    print('  weight matrix multiplies: %.1f ms, %.1f GFLOP/s' % (mm_ms, mm_flop / mm_ms / 1e6))
    print('  slowest:', ', '.join('%s %.0f GFLOP/s (%.2f ms)' % (n, g, t) for g, t, n in sorted(rates)[:5]))
print('  other layers by op:')
for op, (n, ms) in sorted(others.items(), key=lambda x: -x[1][1])[:10]:
    print('    %-50s x%-3d %7.2f ms' % (op, n, ms))
