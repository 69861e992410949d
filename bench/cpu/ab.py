"""Alternates `kiln bench` of two or more builds on the same models (A B, then B A, ...) and prints, per model and
thread count, the median over rounds of each run's median and the smallest minimum. On a shared machine one run
says little; alternating rounds spread the other load over every version alike.

    python3 bench/cpu/ab.py --version before=/tmp/kiln_before:/tmp/before --version after=build/tools/kiln/kiln:/tmp/after \
        --models vit_b_16,bert_base,gpt2_small --rounds 4 --iters 5 --threads 1,2

Each version is NAME=KILN_BINARY:MODULE_DIR with MODULE_DIR/MODEL.kiln compiled by that binary; inputs are
/work/models/MODEL/io_0.npz (--models-dir).
"""
import argparse
import json
import os
import statistics
import subprocess

ap = argparse.ArgumentParser()
ap.add_argument('--version', action='append', required=True)
ap.add_argument('--models', required=True)
ap.add_argument('--models-dir', default='/work/models')
ap.add_argument('--rounds', type=int, default=4)
ap.add_argument('--iters', default='5')
ap.add_argument('--threads', default='1')
a = ap.parse_args()
versions = [v.split('=', 1) for v in a.version]
medians, minima = {}, {}
for r in range(a.rounds):
    for m in a.models.split(','):
        for name, spec in (versions if r % 2 == 0 else versions[::-1]):
            binary, folder = spec.split(':')
            out = subprocess.run([binary, 'bench', f'{folder}/{m}.kiln', '--inputs', f'{a.models_dir}/{m}/io_0.npz',
                                  '--threads', a.threads, '--iters', a.iters, '--warmup', '1', '--json'],
                                 check=True, capture_output=True, text=True).stdout
            for run in json.loads(out[out.index('{'):])['runs']:
                medians.setdefault((m, run['threads'], name), []).append(run['kiln']['median'])
                minima.setdefault((m, run['threads'], name), []).append(run['kiln']['min'])
        print('round %d done, load average %.1f' % (r, os.getloadavg()[0]), flush=True)
print('model threads ' + ' '.join('%s(median/min)' % n for n, _ in versions))
for (m, t, name) in sorted(medians):
    if name != versions[0][0]:
        continue
    print(m, t, ' '.join('%.1f/%.1f' % (statistics.median(medians[(m, t, n)]), min(minima[(m, t, n)]))
                         for n, _ in versions))
