#!/usr/bin/env python3
"""Structured mutation sweep: edits the bundled fixtures' models/model.json field by field and op arguments value by
value, and the compiled modules' module.json field by field, then runs `kiln` on every mutant. Bounded and
deterministic (a fixed seed, a fixed number of mutations); needs only the standard library and numpy (Debian:
/usr/bin/python3 with python3-numpy).

  /usr/bin/python3 fuzz/structured_sweep.py --kiln build/tools/kiln/kiln [--mutations 40] [--seed 23] [--jobs 2]

For a mutated .pt2: `kiln run --reference` (libtorch node by node) and `kiln run` (compiled in memory) on the
fixture's inputs. For a mutated .kiln (compiled once from the fixture, then module.json edited): `kiln run` on the
same inputs. A finding is
  crash    a signal or an exit code other than 0, 1, 2; or no exit within --timeout seconds (hang)
  message  a rejection (exit 2) that is not exactly one line "kiln: error: ...", or that says [Internal] or
           carries libtorch's INTERNAL ASSERT
  wrong    outputs of the compiled module that differ from the reference's (--reference for a .pt2, the unmutated
           module for a .kiln; numpy allclose with --atol/--rtol, NaN equal to NaN, shapes and dtypes equal), or a
           program that runs compiled although libtorch rejects it
Findings listed in fuzz/sweep_known.txt (known, being fixed under issue 23) are reported as known and do not fail
the sweep; a known one that no longer fails is reported so that it can be removed from the list. Exit 1 when any
other finding, 0 otherwise; every finding's mutant is kept under --keep.
"""

import argparse
import concurrent.futures
import copy
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data")
KNOWN = os.path.join(ROOT, "fuzz", "sweep_known.txt")
FIXTURES = ["tiny_mlp", "tiny_convnet", "tiny_encoder"]
MODEL_JSON = "models/model.json"
MODULE_JSON = "kiln_module/module.json"

INT_VALUES = [0, 1, -1, 2, 3, 2**31, 2**62, -2**63, 2**63 - 1]
FLOAT_VALUES = [0.0, -1.0, 1e-30, 1e30, 0.5]
# aten dtype codes of torch.export's schema (ScalarType): bool, uint8, int8, int32, int64, half, float, double, bf16.
DTYPE_CODES = [12, 1, 2, 4, 5, 6, 7, 8, 13]
# Ops of equal arity that a target may be swapped for (a different but legal program).
SAME_ARITY = [
    ["torch.ops.aten.relu.default", "torch.ops.aten.sigmoid.default", "torch.ops.aten.tanh.default",
     "torch.ops.aten.gelu.default", "torch.ops.aten.neg.default"],
    ["torch.ops.aten.add.Tensor", "torch.ops.aten.sub.Tensor", "torch.ops.aten.mul.Tensor",
     "torch.ops.aten.div.Tensor", "torch.ops.aten.maximum.default"],
]


# ----------------------------------------------------------------------------------------------------------------
# Mutations: (description, function(json) -> None) pairs, the description naming the file, the JSON path and value.


def json_path(path):
    return "".join("[%d]" % p if isinstance(p, int) else "." + p for p in path)


def at(doc, path):
    for p in path[:-1]:
        doc = doc[p]
    return doc, path[-1]


def setter(path, value):
    def apply(doc):
        parent, key = at(doc, path)
        parent[key] = copy.deepcopy(value)
    return apply


def deleter(path):
    def apply(doc):
        parent, key = at(doc, path)
        del parent[key]
    return apply


def value_variants(value):
    """Replacement values for one JSON value, by its type."""
    if isinstance(value, bool):
        return [not value, 1, None]
    if isinstance(value, int):
        return sorted(set(INT_VALUES + [value + 1, value - 1]) - {value}) + [str(value), None]
    if isinstance(value, float):
        return [v for v in FLOAT_VALUES if v != value] + [value * 2, -value, int(value)]
    if isinstance(value, str):
        return ["", "zz", value + "_", value[:-1]]
    if isinstance(value, list):
        out = [[]]
        if value:
            out += [value[:-1], value + value[-1:], list(reversed(value))]
            if all(isinstance(v, int) and not isinstance(v, bool) for v in value):
                out += [[0] * len(value), [-1] * len(value), [2**31] * len(value)]
        return [v for v in out if v != value]
    if value is None:
        return [0, "", []]
    return [None]


def leaf_mutations(label, doc, path, skip=()):
    """Every leaf (and list) of doc below path, each value replaced by its variants, and object keys dropped."""
    out = []
    node = doc
    for p in path:
        node = node[p]

    def walk(v, p):
        if isinstance(v, dict):
            for k in v:
                if k in skip:
                    continue
                out.append(("%s %s deleted" % (label, json_path(p + [k])), deleter(p + [k])))
                walk(v[k], p + [k])
            return
        for variant in value_variants(v):
            out.append(("%s %s = %s" % (label, json_path(p), json.dumps(variant)), setter(p, variant)))
        if isinstance(v, list):
            for i, e in enumerate(v):
                if isinstance(e, (dict, list)):
                    walk(e, p + [i])

    walk(node, list(path))
    return out


def argument_mutations(label, model):
    """Op arguments value by value (and their kinds), arguments dropped, tensors rewired, targets swapped."""
    graph = model["graph_module"]["graph"]
    tensors = sorted(graph["tensor_values"])
    out = []
    for n, node in enumerate(graph["nodes"]):
        base = ["graph_module", "graph", "nodes", n]
        for group in SAME_ARITY:
            if node["target"] in group:
                for other in group:
                    if other != node["target"]:
                        out.append(("%s %s = %s" % (label, json_path(base + ["target"]), other),
                                    setter(base + ["target"], other)))
        for a, arg in enumerate(node["inputs"]):
            path = base + ["inputs", a, "arg"]
            where = "%s %s(%s)" % (label, json_path(path), node["target"].replace("torch.ops.", ""))
            out.append(("%s argument %s dropped" % (where, arg.get("name")),
                        deleter(base + ["inputs", a])))
            for kind, value in arg["arg"].items():
                if kind == "as_tensor":
                    for other in tensors[:: max(1, len(tensors) // 6)]:
                        if other != value["name"]:
                            out.append(("%s as_tensor = %s" % (where, other), setter(path, {"as_tensor": {"name": other}})))
                    out.append(("%s = as_none" % where, setter(path, {"as_none": True})))
                    continue
                for variant in value_variants(value):
                    out.append(("%s %s = %s" % (where, kind, json.dumps(variant)), setter(path, {kind: variant})))
                for other_kind in ("as_int", "as_float", "as_ints", "as_bool", "as_string", "as_none"):
                    if other_kind != kind:
                        out.append(("%s %s -> %s" % (where, kind, other_kind), setter(path, {other_kind: value})))
    return out


def tensor_mutations(label, model):
    """Declared dtypes and sizes of the graph's values (intermediates and outputs included)."""
    graph = model["graph_module"]["graph"]
    out = []
    for name, meta in sorted(graph["tensor_values"].items()):
        base = ["graph_module", "graph", "tensor_values", name]
        for code in DTYPE_CODES:
            if code != meta["dtype"]:
                out.append(("%s %s = %d" % (label, json_path(base + ["dtype"]), code), setter(base + ["dtype"], code)))
        for d, size in enumerate(meta["sizes"]):
            for kind, value in size.items():
                if kind == "as_int":
                    for variant in (0, 1, value + 1, -1, 2**40):
                        if variant != value:
                            out.append(("%s %s = %d" % (label, json_path(base + ["sizes", d, kind]), variant),
                                        setter(base + ["sizes", d, kind], variant)))
    return out


def model_mutations(fixture, model):
    label = "%s model.json" % fixture
    out = argument_mutations(label, model)
    out += tensor_mutations(label, model)
    out += leaf_mutations(label, model, ["range_constraints"])
    out += leaf_mutations(label, model, ["graph_module", "signature"])
    out += leaf_mutations(label, model, ["graph_module", "graph", "outputs"])
    return out


def module_mutations(fixture, module):
    return leaf_mutations("%s module.json" % fixture, module, [])


# ----------------------------------------------------------------------------------------------------------------
# Running kiln.


class Sweep:
    def __init__(self, args, work):
        self.args = args
        self.work = work
        self.env = dict(os.environ, KILN_CACHE_DIR=os.path.join(work, "cache"), KILN_LOG_LEVEL="error")

    def kiln(self, *argv):
        """(exit code or 'hang', stderr) of one kiln command."""
        try:
            p = subprocess.run([self.args.kiln, "-q", *argv], capture_output=True, text=True, env=self.env,
                               timeout=self.args.timeout, errors="replace")
        except subprocess.TimeoutExpired:
            return "hang", ""
        return p.returncode, p.stderr

    @staticmethod
    def problem(rc, stderr):
        """The finding in one command's outcome, or None (accepted: rc 0; rejected cleanly: rc 2, one line)."""
        if rc == "hang":
            return "crash: no exit within the timeout (hang)"
        if rc not in (0, 1, 2):
            return "crash: exit %s: %s" % (rc, stderr.strip().splitlines()[-1:] if stderr.strip() else "")
        if rc == 2:
            lines = stderr.strip().splitlines()
            if len(lines) != 1 or not lines[0].startswith("kiln: error: "):
                return "message: rejection is %d lines: %s" % (len(lines), " | ".join(lines[:3])[:300])
            if "[Internal]" in lines[0] or "INTERNAL ASSERT" in lines[0]:
                return "message: %s" % lines[0][:300]
        return None

    def compare(self, got_path, want_path):
        """None when the outputs match, else what differs."""
        got = np.load(got_path)
        want = np.load(want_path)
        if sorted(got.files) != sorted(want.files):
            return "outputs %s, expected %s" % (sorted(got.files), sorted(want.files))
        for k in sorted(want.files):
            a, b = got[k], want[k]
            if a.shape != b.shape or a.dtype != b.dtype:
                return "%s: %s %s, expected %s %s" % (k, a.dtype, a.shape, b.dtype, b.shape)
            if a.dtype.kind in "fc":
                if not np.allclose(a, b, rtol=self.args.rtol, atol=self.args.atol, equal_nan=True):
                    diff = np.nanmax(np.abs(a.astype(np.float64) - b.astype(np.float64))) if a.size else 0
                    return "%s: max abs diff %g (NaN positions %s)" % (
                        k, diff, "equal" if np.array_equal(np.isnan(a), np.isnan(b)) else "differ")
            elif not np.array_equal(a, b):
                return "%s: values differ" % k
        return None

    def check_program(self, case_dir, pt2, inputs):
        ref_out = os.path.join(case_dir, "reference.npz")
        out = os.path.join(case_dir, "compiled.npz")
        rc_ref, err_ref = self.kiln("run", pt2, "--reference", "--inputs", inputs, "--outputs", ref_out)
        finding = self.problem(rc_ref, err_ref)
        if finding:
            return "reference " + finding, "rejected"
        rc, err = self.kiln("run", pt2, "--inputs", inputs, "--outputs", out)
        finding = self.problem(rc, err)
        if finding:
            return "compiled " + finding, "rejected"
        if rc != 0:
            return None, "rejected"
        if rc_ref != 0:
            return "wrong: runs compiled although libtorch rejects it: %s" % err_ref.strip()[:300], "accepted"
        diff = self.compare(out, ref_out)
        return ("wrong: compiled differs from --reference: " + diff if diff else None), "accepted"

    def check_module(self, case_dir, module, inputs, want):
        out = os.path.join(case_dir, "compiled.npz")
        rc, err = self.kiln("run", module, "--inputs", inputs, "--outputs", out)
        finding = self.problem(rc, err)
        if finding:
            return finding, "rejected"
        if rc != 0:
            return None, "rejected"
        diff = self.compare(out, want)
        return ("wrong: differs from the unmutated module: " + diff if diff else None), "accepted"


def rewrite_zip(src, dst, entry_suffix, doc):
    """Copies the zip src to dst with the entry ending in entry_suffix replaced by doc (JSON)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename.endswith(entry_suffix):
                data = json.dumps(doc).encode()
            zout.writestr(zipfile.ZipInfo(info.filename, date_time=(2024, 1, 1, 0, 0, 0)), data)


def read_json_entry(path, suffix):
    with zipfile.ZipFile(path) as z:
        name = next(n for n in z.namelist() if n.endswith(suffix))
        return json.loads(z.read(name))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kiln", required=True, help="the kiln command to test")
    parser.add_argument("--mutations", type=int, default=40, help="mutants to run (default 40)")
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per kiln command (a hang)")
    parser.add_argument("--atol", type=float, default=1e-3)
    parser.add_argument("--rtol", type=float, default=1e-3)
    parser.add_argument("--module-share", type=float, default=0.25, help="share of mutants that edit module.json")
    parser.add_argument("--keep", default="build/sweep-findings", help="folder for the mutants of findings")
    parser.add_argument("--list", action="store_true", help="print the chosen mutations and exit")
    args = parser.parse_args()

    known = set()
    if os.path.exists(KNOWN):
        with open(KNOWN) as f:
            known = {l.rstrip("\n") for l in f if l.strip() and not l.startswith("#")}

    work = tempfile.mkdtemp(prefix="kiln-sweep-")
    sweep = Sweep(args, work)
    try:
        # Every fixture's candidates, the base module compiled once and run once.
        models, modules = [], []
        for fixture in FIXTURES:
            pt2 = os.path.join(DATA, fixture, "model.pt2")
            inputs = os.path.join(DATA, fixture, "io_0.npz")
            for desc, fn in model_mutations(fixture, read_json_entry(pt2, MODEL_JSON)):
                models.append((desc, fn, fixture, pt2, inputs))
            modules.append(fixture)
        rng = random.Random(args.seed)
        n_module = int(round(args.mutations * args.module_share))
        chosen = [("model",) + m for m in rng.sample(models, min(len(models), args.mutations - n_module))]
        bases = {}
        module_candidates = []
        if n_module:
            for fixture in modules:
                pt2 = os.path.join(DATA, fixture, "model.pt2")
                inputs = os.path.join(DATA, fixture, "io_0.npz")
                kiln_path = os.path.join(work, fixture + ".kiln")
                rc, err = sweep.kiln("compile", pt2, "-o", kiln_path)
                if rc != 0:
                    print("sweep: cannot compile %s: %s" % (fixture, err.strip()), file=sys.stderr)
                    return 2
                want = os.path.join(work, fixture + ".out.npz")
                rc, err = sweep.kiln("run", kiln_path, "--inputs", inputs, "--outputs", want)
                if rc != 0:
                    print("sweep: cannot run %s: %s" % (fixture, err.strip()), file=sys.stderr)
                    return 2
                bases[fixture] = (kiln_path, inputs, want)
                for desc, fn in module_mutations(fixture, read_json_entry(kiln_path, MODULE_JSON)):
                    module_candidates.append((desc, fn, fixture))
            chosen += [("module",) + m for m in rng.sample(module_candidates, min(len(module_candidates), n_module))]
        if args.list:
            for c in chosen:
                print(c[1])
            return 0

        def run_case(index_case):
            index, case = index_case
            case_dir = os.path.join(work, "case%04d" % index)
            os.makedirs(case_dir)
            if case[0] == "model":
                _, desc, fn, fixture, pt2, inputs = case
                doc = read_json_entry(pt2, MODEL_JSON)
                fn(doc)
                mutant = os.path.join(case_dir, "model.pt2")
                rewrite_zip(pt2, mutant, MODEL_JSON, doc)
                finding, outcome = sweep.check_program(case_dir, mutant, inputs)
            else:
                _, desc, fn, fixture = case
                kiln_path, inputs, want = bases[fixture]
                doc = read_json_entry(kiln_path, MODULE_JSON)
                fn(doc)
                mutant = os.path.join(case_dir, "module.kiln")
                rewrite_zip(kiln_path, mutant, MODULE_JSON, doc)
                finding, outcome = sweep.check_module(case_dir, mutant, inputs, want)
            return desc, finding, outcome, mutant

        counts = {"accepted": 0, "rejected": 0}
        new, still_known, fixed_known = [], [], []
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for desc, finding, outcome, mutant in pool.map(run_case, enumerate(chosen)):
                counts[outcome] += 1
                if not finding:
                    if desc in known:
                        fixed_known.append(desc)
                    continue
                keep = os.path.join(args.keep, "finding%03d" % (len(new) + len(still_known)))
                os.makedirs(keep, exist_ok=True)
                shutil.copy(mutant, keep)
                with open(os.path.join(keep, "README"), "w") as f:
                    f.write("%s\n%s\n" % (desc, finding))
                if desc in known:
                    still_known.append(desc)
                else:
                    new.append((desc, finding, keep))
        for desc in still_known:
            print("sweep: known (issue 23): %s" % desc)
        for desc in fixed_known:
            print("sweep: known finding no longer fails, remove it from fuzz/sweep_known.txt: %s" % desc)
        for desc, finding, keep in new:
            print("sweep: FINDING: %s\n  %s\n  mutant kept in %s" % (desc, finding, keep), file=sys.stderr)
        print("sweep: %d mutants (seed %d): %d accepted and checked, %d rejected cleanly, %d findings (%d known)" %
              (len(chosen), args.seed, counts["accepted"], counts["rejected"], len(new) + len(still_known),
               len(still_known)))
        return 1 if new else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
