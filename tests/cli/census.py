#!/usr/bin/python3
"""The hostile-input census (issue 31): hundreds of generated malformed inputs — specs, --set
overrides, CSV, IDX and CIFAR files, run folders (summary.json, metrics.csv, spectra, traces,
dwells, spec.json), resume states, trajectory checkpoints and TorchScript files — each given to
liftlab-cli as a user would. Every case must end with the expected exit code and a message naming
the file, key or line; no crash (signal, sanitizer report, uncaught exception), no hang, and no run
folder claiming `ok` ("lost"). The table at the end counts tried / clear / unclear / crash / hang /
lost per kind of input. No output of any case — stdout, stderr, a summary.json it wrote — may hold a
raw LibTorch stack trace (`frame #`, `Exception raised from`): that case is a "trace" (issue 36).

usage: census.py LIFTLAB_CLI WORKDIR [--stride N] [--jobs J]
  --stride N   run every N-th case only (the sanitizer pass samples the census; also read from
               LIFTLAB_CENSUS_STRIDE)
"""
import concurrent.futures
import copy
import gzip
import json
import os
import shutil
import struct
import subprocess
import sys

CLI = None
WORK = None
TIMEOUT = 60

# A small valid spec (cf-regression at census size) that the spec cases break one way each.
BASE = {
    "name": "census",
    "task": {"kind": "teacher-regression", "input_dim": 4, "output_dim": 2, "n_train": 64,
             "n_test": 32, "teacher_hidden": [8]},
    "backbone": {"kind": "mlp", "hidden": [8], "feature_dim": 4},
    "methods": [{"name": "adam", "lr": 0.01}, {"name": "cf-prox", "lambda": 1.0}],
    "batch_size": 8, "steps": 2, "seeds": [0], "log_every": 1, "threads": 1,
}


class Case:
    def __init__(self, kind, name, argv, expect_exit, needles, files=None, setup=None):
        self.kind, self.name, self.argv = kind, name, argv
        self.expect_exit, self.needles = expect_exit, needles
        self.files = files or {}
        self.setup = setup  # callable(case_dir) run before the command


def spec_bytes(d):
    return json.dumps(d).encode()


def with_change(path, value):
    d = copy.deepcopy(BASE)
    node = d
    for k in path[:-1]:
        node = node[k]
    if value is DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return d


DELETE = object()


def spec_cases():
    out = []
    run = lambda: ["run", "spec.json", "--out", "runs"]
    def add(name, data, needles, code=2):
        out.append(Case("spec", name, run(), code, needles, {"spec.json": data}))
    # Not JSON at all, or JSON cut anywhere.
    text = json.dumps(BASE, indent=1).encode()
    add("empty file", b"", ["spec.json"])
    add("binary garbage", bytes(range(256)) * 4, ["spec.json"])
    add("invalid utf-8", b'{"name": "\xff\xfe"}', ["spec.json"])
    for cut in range(10, len(text), max(1, len(text) // 24)):
        add(f"cut at byte {cut}", text[:cut], ["spec.json:"])  # file:line
    add("nested 100 deep", b"[" * 100 + b"]" * 100, ["spec.json", "deeper"])
    add("top-level array", b"[]", ["root", "expected an object"])
    add("top-level number", b"3", ["root", "expected an object"])
    # One key wrong at a time: the message names the dotted key.
    wrong = [
        (["steps"], -1, "steps"), (["steps"], 0, "steps"), (["steps"], "ten", "steps"),
        (["steps"], 1.5, "steps"), (["steps"], 2 ** 40, "steps"), (["batch_size"], 0, "batch_size"),
        (["batch_size"], 10 ** 6, "batch_size"), (["seeds"], [], "seeds"), (["seeds"], [0, 0], "seeds[1]"),
        (["seeds"], [-1], "seeds"), (["seeds"], "0", "seeds"), (["log_every"], 0, "log_every"),
        (["threads"], 0, "threads"), (["threads"], 4096, "threads"), (["name"], "", "name"),
        (["name"], "../escape", "name"), (["name"], "a/b", "name"), (["name"], 7, "name"),
        (["device"], "tpu", "device"), (["step_order"], "sideways", "step_order"),
        (["divergence_factor"], 0.5, "divergence_factor"), (["methods"], [], "methods"),
        (["methods"], {}, "methods"), (["methods"], [{}], "methods[0].name"),
        (["methods"], [{"name": "nope"}], "methods[0].name"),
        (["methods"], [{"name": "adam", "lr": -1}], "methods[0].lr"),
        (["methods"], [{"name": "adam", "label": "../x"}], "methods[0].label"),
        (["methods"], [{"name": "adam", "lr": 0.1}, {"name": "adam", "lr": 0.1}], "methods[1].label"),
        (["methods"], [{"name": "adam", "extra": 1}], "methods[0].extra"),
        (["methods"], [{"name": "lifter"}], "methods[0].name"),
        (["methods"], [{"name": "ce"}], "methods[0].name"),
        (["methods"], [{"name": "cf-prox", "lambda": -3}], "methods[0].lambda"),
        (["task", "kind"], "no-such-task", "task.kind"), (["task", "n_train"], 0, "task.n_train"),
        (["task", "n_test"], -5, "task.n_test"), (["task", "noise"], -1, "task.noise"),
        (["task", "input_dim"], 0, "task.input_dim"), (["task", "teacher_hidden"], [0], "task.teacher_hidden[0]"),
        (["task", "test_fraction"], 1.5, "task.test_fraction"), (["task", "unknown"], 1, "task.unknown"),
        (["task"], [], "task"), (["backbone", "kind"], "transformer", "backbone.kind"),
        (["backbone", "hidden"], [-1], "backbone.hidden[0]"), (["backbone", "feature_dim"], 0, "backbone.feature_dim"),
        (["backbone", "activation"], "sigmoid", "backbone.activation"),
        (["backbone", "kind"], "torchscript", "backbone.script"),
        (["backbone", "init"], "zeros", "backbone.init"), (["optimizer"], {"kind": "lbfgs"}, "optimizer.kind"),
        (["optimizer"], {"lr": 0}, "optimizer.lr"), (["optimizer"], {"momentum": 1.0}, "optimizer.momentum"),
        (["icnn"], {"width": 0}, "icnn.width"), (["icnn"], {"script": "m.pt"}, "icnn.constrained"),
        (["icnn"], {"constrained_regex": "("}, "icnn.constrained"),
        (["diagnostics"], {"probe_size": 1}, "diagnostics.probe_size"),
        (["diagnostics"], {"jacobian_batches": 2}, "diagnostics.jacobian_batches"),
        (["diagnostics"], {"nothing": 1}, "diagnostics.nothing"),
        (["sweep"], {"key": "batch_size"}, "sweep"), (["sweep"], {"key": "seeds", "values": [1]}, "sweep.key"),
        (["sweep"], {"key": "batch_size", "values": [8, 0]}, "batch_size"),
        (["unknown_top_key"], True, "unknown_top_key"), (["export_models"], "yes", "export_models"),
        (["save_state"], 1, "save_state"), (["schema_version"], 99, "schema_version"),
    ]
    for path, value, key in wrong:
        add(f"{'.'.join(path)} = {json.dumps(value)[:30]}", spec_bytes(with_change(path, value)),
            [f"'{key}"])
    add("spec is a folder", None, ["spec.json"])
    return out


def set_cases():
    out = []
    base = ["run", "spec.json", "--out", "runs"]
    sets = [
        ("batch_size=abc", "batch_size"), ("batch_size=-4", "batch_size"), ("steps=1e999", "steps"),
        ("steps=[1,2]", "steps"), ("nothing.deep.key=1", "nothing"), ("task.kind=", "task.kind"),
        ("methods.7.lr=1", "methods"), ("methods.nolabel.lr=1", "methods"),
        ("methods.adam.lr=-1", "methods[0].lr"), ("methods.adam.wat=1", "methods[0].wat"),
        ("=5", "key=value"), ("no_equals_sign", "key=value"), ("seeds=[1,1]", "seeds[1]"),
        ("seeds=[-3]", "seeds"), ("threads=0", "threads"), ("name=../../etc", "name"),
        ("name=a b", "name"), ("device=quantum", "device"), ("task.n_train=99999999999999999999", "task.n_train"),
        ("task.noise=nan", "task.noise"), ("task.noise=\"x\"", "task.noise"), ("backbone.hidden=[0]", "backbone.hidden[0]"),
        ("backbone=3", "backbone"), ("task=[]", "task"), ("methods={}", "methods"),
        ("batch_size=" + "[" * 70 + "]" * 70, "batch_size"), ("log_every=0", "log_every"),
        ("divergence_factor=-1", "divergence_factor"), ("sweep.key=batch_size", "sweep"),
        ("backbone.kind=torchscript", "backbone.script"), ("icnn.init=maybe", "icnn.init"),
        ("task.kind=icnn-ebm-1d", "methods[0].name"), ("step_order=3", "step_order"),
        ("export_models=2", "export_models"), ("steps=0x10", "steps"), ("batch_size=1.5", "batch_size"),
        ("seeds=\"all\"", "seeds"), ("task.input_dim=-1", "task.input_dim"), ("methods.0.name=xyz", "methods[0].name"),
        ("methods.-1.lr=1", "methods"),
    ]
    for s, key in sets:
        out.append(Case("--set", s[:40], base + ["--set", s], 2, [key],
                        {"spec.json": spec_bytes(BASE)}))
    return out


def csv_run(path, extra=()):
    return ["run", "spec.json", "--out", "runs", "--set", "task.kind=csv-regression",
            "--set", f"task.csv_path={path}", *extra]


def csv_cases():
    out = []
    good_rows = ["a,b,y"] + [f"{i},{i * 2},{i % 7}" for i in range(60)]
    def add(name, text, needles, extra=()):
        out.append(Case("csv", name, csv_run("data.csv", extra), 2, ["data.csv", *needles],
                        {"data.csv": text if isinstance(text, bytes) else text.encode(),
                         "spec.json": spec_bytes(BASE)}))
    add("empty", "", [])
    add("header only", "a,b,y\n", [])
    add("no header numbers", "1,2,3\n4,5,6\n", [])
    add("binary", bytes(range(256)), [])
    for line in (2, 10, 40):
        rows = list(good_rows)
        rows[line - 1] = rows[line - 1] + ",9"
        add(f"extra cell line {line}", "\n".join(rows) + "\n", [f":{line}"])
        rows = list(good_rows)
        rows[line - 1] = rows[line - 1].split(",")[0]
        add(f"missing cells line {line}", "\n".join(rows) + "\n", [f":{line}"])
        for bad in ("abc", "nan", "inf", "-inf", "1e400", "", "0x1F", "1,5"):
            rows = list(good_rows)
            cells = rows[line - 1].split(",")
            cells[1] = bad
            rows[line - 1] = ",".join(cells)
            add(f"cell {bad!r} line {line}", "\n".join(rows) + "\n", [f":{line}"])
    add("duplicate header", "a,a,y\n" + "\n".join(good_rows[1:]) + "\n", [])
    add("unknown target column", "\n".join(good_rows) + "\n", ["zzz"],
        ("--set", "task.target_columns=[\"zzz\"]"))
    add("all columns targets", "\n".join(good_rows) + "\n", [],
        ("--set", "task.target_columns=[\"a\",\"b\",\"y\"]"))
    # Valid though odd: a constant input column is standardised to zeros, the run goes ahead.
    out.append(Case("csv", "constant column (valid)", csv_run("data.csv"), 0, [],
                    {"data.csv": ("a,b,y\n" + "\n".join(f"1,{i},{i % 5}" for i in range(60)) + "\n").encode(),
                     "spec.json": spec_bytes(BASE)}))
    add("too few rows for batch", "a,b,y\n1,2,3\n4,5,6\n7,8,9\n", [])
    add("nul bytes", "a,b,y\n1,2\x003\n", [])
    add("very long line", "a,b,y\n" + "1," * 100000 + "1\n", [])
    out.append(Case("csv", "missing file", csv_run("nothere.csv"), 2, ["nothere.csv"],
                    {"spec.json": spec_bytes(BASE)}))
    out.append(Case("csv", "folder as file", csv_run("adir"), 2, ["adir"],
                    {"spec.json": spec_bytes(BASE)}, setup=lambda d: os.mkdir(os.path.join(d, "adir"))))
    return out


def idx_header(magic_type, dims):
    return struct.pack(">BBBB", 0, 0, magic_type, len(dims)) + b"".join(struct.pack(">I", d) for d in dims)


def idx_cases():
    out = []
    images = idx_header(0x08, [20, 4, 4]) + bytes(20 * 16)
    labels = idx_header(0x08, [20]) + bytes(i % 10 for i in range(20))
    fmnist = ["run", "spec.json", "--out", "runs", "--set", "task.kind=fashion-mnist",
              "--set", "task.data_dir=data", "--set", "backbone.kind=mlp", "--set", "task.n_train=0",
              "--set", "task.n_test=0", "--set", "methods=[{\"name\":\"adam\",\"lr\":0.01}]"]
    names = ["train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
             "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"]
    def add(name, broken_index, content, needles, raw=False):
        files = {"spec.json": spec_bytes(BASE)}
        for i, n in enumerate(names):
            data = images if i % 2 == 0 else labels
            if i == broken_index:
                data = content
            files["data/" + n] = data if raw and i == broken_index else gzip.compress(data)
        out.append(Case("idx", name, fmnist, 2, [names[broken_index], *needles], files))
    for target in range(4):
        base = images if target % 2 == 0 else labels
        add(f"empty file {target}", target, b"", [])
        add(f"bad magic {target}", target, b"\x01\x02\x03\x04" + base[4:], [])
        add(f"wrong dtype {target}", target, base[:2] + b"\x0d" + base[3:], [])
        add(f"truncated data {target}", target, base[:-5], [])
        add(f"truncated header {target}", target, base[:6], [])
        add(f"huge count {target}", target, base[:4] + struct.pack(">I", 2 ** 31) + base[8:], [])
        add(f"not gzip {target}", target, b"not gzip at all", [], raw=True)
        add(f"cut gzip {target}", target, gzip.compress(base)[:20], [], raw=True)
    add("zero dims", 0, idx_header(0x08, []), [])
    add("five dims", 0, idx_header(0x08, [1, 1, 1, 1, 1]) + b"\0", [])
    add("label out of range", 1, idx_header(0x08, [20]) + bytes([200] * 20), [])
    add("count mismatch", 1, idx_header(0x08, [19]) + bytes(19), [])
    add("zero images", 0, idx_header(0x08, [0, 4, 4]), [])
    add("zero side", 0, idx_header(0x08, [20, 0, 4]), [])
    return out


def cifar_cases():
    out = []
    rec = 1 + 3 * 32 * 32
    good = b"".join(bytes([i % 10]) + bytes(3 * 32 * 32) for i in range(16))
    args = lambda tr, te, extra=(): ["run", "spec.json", "--out", "runs", "--set", "task.kind=cifar-binary",
                                     "--set", f"task.train_files=[\"{tr}\"]", "--set", f"task.test_files=[\"{te}\"]",
                                     "--set", "backbone.kind=mlp", "--set", "batch_size=4",
                                     "--set", "methods=[{\"name\":\"adam\",\"lr\":0.01}]", *extra]
    def add(name, data, needles, extra=()):
        out.append(Case("cifar", name, args("bad.bin", "good.bin", extra), 2, ["bad.bin", *needles],
                        {"spec.json": spec_bytes(BASE), "good.bin": good, "bad.bin": data}))
    add("empty", b"", [])
    for cut in (1, 100, rec - 1, rec + 1, 3 * rec - 7):
        add(f"size {cut} not a record multiple", good[:cut], [])
    add("label 200", bytes([200]) + good[1:], [])
    add("label 10 of CIFAR-10", bytes([10]) + good[1:], [])
    add("two label bytes, fine label 150", b"".join(bytes([1, 150]) + bytes(3072) for _ in range(4)), [],
        ("--set", "task.label_bytes=2", "--set", "task.label_index=1"))
    out.append(Case("cifar", "label index beyond", args("bad.bin", "good.bin", ("--set", "task.label_index=3")),
                    2, ["task.label_index"], {"spec.json": spec_bytes(BASE), "good.bin": good, "bad.bin": good}))
    add("garbage", bytes(range(256)) * 13, [])
    out.append(Case("cifar", "missing test file", args("good.bin", "none.bin"), 2, ["none.bin"],
                    {"spec.json": spec_bytes(BASE), "good.bin": good}))
    out.append(Case("cifar", "no train files", ["run", "spec.json", "--out", "runs", "--set",
                    "task.kind=cifar-binary", "--set", "task.test_files=[\"good.bin\"]", "--set",
                    "backbone.kind=mlp", "--set", "methods=[{\"name\":\"adam\",\"lr\":0.01}]"], 2,
                    ["train_files"], {"spec.json": spec_bytes(BASE), "good.bin": good}))
    return out


def folder_cases(templates):
    """Run folders: one file of a real (small) run damaged at a time, read by report, landscape
    and run --resume."""
    out = []
    cf, icnn, resumable = templates["cf"], templates["icnn"], templates["resumable"]

    def damaged(template, file, content, command, needles, name, code=2, kind="run folder"):
        def setup(d, template=template, file=file, content=content):
            shutil.copytree(template, os.path.join(d, "run"))
            p = os.path.join(d, "run", file)
            if content is None:
                os.remove(p)
            elif callable(content):
                with open(p, "rb") as f:
                    old = f.read()
                with open(p, "wb") as f:
                    f.write(content(old))
            else:
                with open(p, "wb") as f:
                    f.write(content)
        out.append(Case(kind, name, command, code, needles, setup=setup))

    # The report draws what it can read: an unreadable optional file or row is left out with a
    # note naming it (exit 0); metrics.csv, the one file a report needs, is an error (exit 2).
    report = ["report", "run"]
    # (summary.json feeds the final-metrics table: damaged, it is an error naming its line.)
    for file, code, needles in (("summary.json", 2, ["summary.json"]), ("spec.json", 0, ["spec.json", "left out"])):
        damaged(cf, file, b"", report, needles, f"report: empty {file}", code=code)
        damaged(cf, file, b"{", report, needles, f"report: cut {file}", code=code)
        damaged(cf, file, b"[" * 200 + b"]" * 200, report, needles, f"report: deep {file}", code=code)
        damaged(cf, file, bytes(range(256)), report, needles, f"report: binary {file}", code=code)
        damaged(cf, file, lambda b: b[: len(b) // 2], report, needles, f"report: half {file}", code=code)
    damaged(cf, "summary.json", b'{"status": "weird", "runs": []}', report, ["summary.json", "weird"],
            "report: unknown status", code=0)
    damaged(cf, "summary.json", b'{"status": "ok", "runs": 3}', report, ["summary.json", "runs"],
            "report: runs not a list")
    damaged(cf, "summary.json", None, report, ["summary.json", "missing"], "report: no summary.json", code=0)
    damaged(cf, "spec.json", b'{"schema_version": 999}', report, ["spec.json", "schema_version"],
            "report: newer schema", code=0)
    damaged(cf, "metrics.csv", None, report, ["metrics.csv"], "report: no metrics.csv")
    for name, change in [
        ("bad header", lambda b: b"step,method\n" + b.split(b"\n", 1)[1]),
        ("non-numeric step", lambda b: b + b"x,adam,0,test_loss,1\n"),
        ("huge step", lambda b: b + b"99999999999999999999,adam,0,test_loss,1\n"),
        ("negative seed", lambda b: b + b"5,adam,-1,test_loss,1\n"),
        ("missing column", lambda b: b + b"5,adam,0,test_loss\n"),
        ("extra column", lambda b: b + b"5,adam,0,test_loss,1,2\n"),
        ("bad value", lambda b: b + b"5,adam,0,test_loss,abc\n"),
        ("binary row", lambda b: b + bytes(range(1, 60)) + b"\n"),
    ]:
        damaged(cf, "metrics.csv", change, report, ["metrics.csv", ":"], f"report: metrics {name}")
    for name, change in [
        ("bad header", lambda b: b"a,b\n"),
        ("bad sigma", lambda b: b + b"5,adam,0,0,abc\n"),
        ("huge index", lambda b: b + b"5,adam,0,99999999999,1\n"),
        ("short row", lambda b: b + b"5,adam\n"),
    ]:
        damaged(cf, "spectra.csv", change, report, ["spectra.csv:", "left out"], f"report: spectra {name}",
                code=0)
    for file, bad_rows in (("traces.csv", [b"1,lifter,0,x,1\n", b"1,lifter\n"]),
                           ("dwells.csv", [b"lifter,0,x\n", b"lifter\n", b"lifter,0,-5\n"])):
        for i, row in enumerate(bad_rows):
            damaged(icnn, file, lambda b, row=row: b + row, report, [file + ":", "left out"],
                    f"report: {file} row {i}", code=0)
    # A row whose step is not an integer is not a row LiftLab wrote: the report stops, naming
    # the file and line (the rule of every run-folder CSV, run/run_files.h).
    damaged(icnn, "traces.csv", lambda b: b + b"a,b,c,d,e\n", report,
            ["traces.csv:", "is not an integer"], "report: traces.csv step not an integer")
    # Trajectory checkpoints, read by landscape.
    landscape = ["landscape", "run", "--grid", "3", "--space", "theta"]
    traj = "trajectories/lifter_seed0.pt"
    for name, content in [("empty", b""), ("garbage", bytes(range(256)) * 8), ("text", b"not a checkpoint"),
                          ("half", lambda b: b[: len(b) // 2]), ("zip head only", lambda b: b[:64])]:
        damaged(icnn, traj, content, landscape, ["lifter_seed0.pt"], f"landscape: trajectory {name}",
                kind="checkpoint")
    # Resume states.
    resume = ["run", "--resume", "run"]
    state = "resume/unit0.state"
    for name, content in [
        ("empty", b""), ("garbage", bytes(range(256)) * 4), ("text", b"hello"),
        ("header only", b"LIFTLAB-STATE 1\n"), ("bad length", b"LIFTLAB-STATE 1\nxyz\n{}\n"),
        ("length beyond", b"LIFTLAB-STATE 1\n999999\n{}\n"), ("index not object", b"LIFTLAB-STATE 1\n2\n[]\n"),
        ("half", lambda b: b[: len(b) // 2]), ("cut raw data", lambda b: b[:-9]),
        ("index only", lambda b: b[: b.index(b"\n", 17) + 1]),
        ("version 2", lambda b: b.replace(b"LIFTLAB-STATE 1", b"LIFTLAB-STATE 2", 1)),
        ("unit renamed", lambda b: b.replace(b'"unit":{"int":0}', b'"unit":{"int":5}', 1)),
        ("step beyond", lambda b: b.replace(b'"step":{"int":', b'"step":{"int":9', 1)),
        ("dtype unknown", lambda b: b.replace(b'"tensor":"float64"', b'"tensor":"complex9"', 1)),
        ("offset beyond", lambda b: b.replace(b'"offset":', b'"offset":9999999', 1)),
        ("shape huge", lambda b: b.replace(b'"shape":[', b'"shape":[99999999,', 1)),
        ("deep index", lambda b: b"LIFTLAB-STATE 1\n400\n" + b"[" * 200 + b"]" * 200 + b"\n"),
    ]:
        damaged(resumable, state, content, resume, ["unit0.state"], f"resume: state {name}",
                kind="checkpoint")
    damaged(resumable, "summary.json", b'{"status": "ok", "runs": []}', resume, ["nothing to resume"],
            "resume: finished run", kind="checkpoint")
    damaged(resumable, "spec.json", b"{}", resume, ["spec.json"], "resume: empty spec", kind="checkpoint")
    damaged(resumable, "metrics.csv", lambda b: b[:20], resume, ["metrics.csv", "shorter"],
            "resume: metrics shorter than the state", kind="checkpoint")
    def later_alone(d):
        shutil.copytree(resumable, os.path.join(d, "run"))
        os.rename(os.path.join(d, "run", "resume", "unit0.state"), os.path.join(d, "run", "resume", "unit1.state"))
    out.append(Case("checkpoint", "resume: state of a later unit alone", resume, 2, ["unit1.state"],
                    setup=later_alone))
    out.append(Case("checkpoint", "resume: not a folder", ["run", "--resume", "nowhere"], 2, ["nowhere"]))
    return out


def torchscript_cases():
    out = []
    bb = lambda: ["run", "spec.json", "--out", "runs", "--set", "backbone.kind=torchscript",
                  "--set", "backbone.script=model.pt"]
    import zipfile, io
    def zipped(entries):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            for n, c in entries.items():
                z.writestr(n, c)
        return buf.getvalue()
    for name, data in [("empty", b""), ("text", b"def forward(x): return x"), ("garbage", bytes(range(256)) * 16),
                       ("empty zip", zipped({})), ("zip of junk", zipped({"a/b": b"x"})),
                       ("zip with bad data.pkl", zipped({"archive/data.pkl": b"\x80\x02junk", "archive/version": b"3"})),
                       ("zip, constants only", zipped({"archive/constants.pkl": b"\x80\x02)", "archive/version": b"3"})),
                       ("pdf header", b"%PDF-1.4\n" + bytes(100))] + [
                           (f"real model cut at {f:.0%}", MODEL[: int(len(MODEL) * f)]) for f in (0.02, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99)] + [
                           ("real model, a byte flipped in its zip directory", MODEL[:-30] + bytes([MODEL[-30] ^ 0xFF]) + MODEL[-29:]),
                           ("real model, its code declared 150 MB (fuzzer find)", declared_huge(MODEL)),
                           ("zip bomb: 200 MB of deflated code", bomb()),
                           ("real model, a 436 MB string in its pickle (fuzzer find)",
                            MODEL.replace(b"X\x08\x00\x00\x00training", b"X\x01\x00\x00\x1atraining", 1)),
                           ("real model, its code's deflate stream damaged (fuzzer find)", damaged_deflate(MODEL)),
                           ("real model, its directory's entry count one more (fuzzer find)", count_plus_one(MODEL)),
                           ("real model, a memo index of 2^32-16 in its pickle",
                            MODEL.replace(b"X\x08\x00\x00\x00training", b"r\xf0\xff\xff\xffN0N0N0N0", 1)),
                           ("real model, its pickle's first opcode a TUPLE1 (fuzzer find)", tuple1_first(MODEL)),
                           ("real model, a dict of three values in its pickle",
                            MODEL.replace(b"X\x08\x00\x00\x00training", b"(NNNdN0N0N0N0", 1)),
                           ("real model, its pickle reads a memo slot never written",
                            MODEL.replace(b"X\x08\x00\x00\x00training", b"j\xf0\xff\xff\x00N0N0N0N0", 1)),
                           ("real model, its pickle a million nested tuples (1 MB)",
                            rewritten(MODEL, lambda n, b: b"\x80\x02N" + b"\x85" * 1_000_000 + b"."
                                      if n.endswith("/data.pkl") else b)),
                           ("real model, a tensor record cut to 100 bytes",
                            rewritten(MODEL, lambda n, b: b[:100] if n.endswith("/data/0") else b)),
                           ("real model, a tensor's sizes past its storage",
                            rewritten(MODEL, lambda n, b: b.replace(b"K\x80K\x10t", b"K\xc8K\x10t", 1)
                                      if n.endswith("/data.pkl") else b)),
                           ("real model, a class constant without Final[] in its code (fuzzer find)",
                            rewritten(MODEL, lambda n, b: b.replace(b"__buffers__ = []", b"__buf2ers__ = []", 1)
                                      if n.endswith("code/__torch__.py") else b)),
                           ("the same behind a zeroed end record and a zip64 one (fuzzer find)",
                            zip64_behind_zeroed(rewritten(MODEL, lambda n, b: b.replace(
                                b"__buffers__ = []", b"__buf2ers__ = []", 1) if n.endswith("code/__torch__.py") else b))),
                           ("damaged code and a debug pickle's string index 17 -> 47 (fuzzer find)",
                            REGRESSION("torchscript-crash-edf277395c1b7ab8ed1b91f31982d6333f0be869")),
                           ("the same behind a zeroed end record and a zip64 one (fuzzer find, as found)",
                            REGRESSION("torchscript-crash-a7ae2aac04820b07b5e993950c4d537b14f8b185"))]:
        out.append(Case("torchscript", name, bb(), 2, ["backbone.script", "model.pt"],
                        {"spec.json": spec_bytes(BASE), "model.pt": data}))
    # A valid model every parameter of which is frozen (requires_grad=False): whatever the methods
    # make of it, no LibTorch stack trace reaches the user (it once did, for the closed-form
    # methods' backbone step). Made with Debian's python3-torch.
    out.append(Case("torchscript", "fully frozen backbone (requires_grad=False)", bb(), 0, [],
                    {"spec.json": spec_bytes(BASE)}, setup=frozen_model))
    return out


FROZEN_MODEL_PY = """
import sys, torch
from torch import nn
class Frozen(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer0 = nn.Linear(4, 8)
        self.layer1 = nn.Linear(8, 4)
        for p in self.parameters():
            p.requires_grad_(False)
    def forward(self, x):
        return torch.tanh(self.layer1(torch.tanh(self.layer0(x))))
torch.manual_seed(0)
torch.jit.script(Frozen()).save(sys.argv[1])
"""


def frozen_model(d):
    script = os.path.join(d, "make_frozen.py")
    with open(script, "w") as f:
        f.write(FROZEN_MODEL_PY)
    subprocess.run(["/usr/bin/python3", script, os.path.join(d, "model.pt")], check=True,
                   capture_output=True, timeout=120)


def patch_code_entry(model, patch, entry=b"/code/__torch__.py"):
    """The model with patch(bytes, central_directory_offset) applied to its code entry (or the
    entry whose name ends with `entry`)."""
    import struct
    b = bytearray(model)
    at = b.find(b"PK\x01\x02")
    while at >= 0:
        n = struct.unpack_from("<H", b, at + 28)[0]
        if bytes(b[at + 46:at + 46 + n]).endswith(entry):
            patch(b, at)
        at = b.find(b"PK\x01\x02", at + 4)
    return bytes(b)


def declared_huge(model):
    """The code entry's uncompressed size set to 150 MB in the central directory."""
    import struct
    return patch_code_entry(model, lambda b, at: struct.pack_into("<I", b, at + 24, 150_000_000))


def damaged_deflate(model):
    """A reserved deflate block type at the start of the code entry's data."""
    import struct

    def patch(b, at):
        local = struct.unpack_from("<I", b, at + 42)[0]
        name_len, extra_len = struct.unpack_from("<HH", b, local + 26)
        b[local + 30 + name_len + extra_len] = 0xFF
    return patch_code_entry(model, patch)


def rewritten(model, patch):
    """The model's archive written again (CRCs right) with patch(name, bytes) applied to each
    entry."""
    import io, zipfile
    src = zipfile.ZipFile(io.BytesIO(model))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for i in src.infolist():
            z.writestr(i.filename, patch(i.filename, src.read(i.filename)))
    return buf.getvalue()


def zip64_behind_zeroed(model):
    """The archive's end record zeroed, a zip64 end record and locator before it that give the
    directory (LibTorch's miniz reads the zip64 one whenever it is there)."""
    import struct
    eocd = len(model) - 22
    assert model[eocd:eocd + 4] == b"PK\x05\x06"
    count, size, offset = struct.unpack_from("<HII", model, eocd + 10)
    record = struct.pack("<IQHHIIQQQQ", 0x06064b50, 44, 45, 45, 0, 0, count, count, size, offset)
    locator = struct.pack("<IIQI", 0x07064b50, 0, eocd, 1)
    return model[:eocd] + record + locator + b"PK\x05\x06" + bytes(18)


def tuple1_first(model):
    """data.pkl's first opcode after PROTO 2 made a TUPLE1, on an empty stack (the fuzzer's
    crash of LibTorch 1.13's unpickler)."""
    import struct

    def patch(b, at):
        local = struct.unpack_from("<I", b, at + 42)[0]
        name_len, extra_len = struct.unpack_from("<HH", b, local + 26)
        data = local + 30 + name_len + extra_len
        assert b[data:data + 2] == b"\x80\x02", "data.pkl is stored and starts with PROTO 2"
        b[data + 2] = 0x85
    return patch_code_entry(model, patch, b"/data.pkl")


def count_plus_one(model):
    """The end-of-directory record's total entry count one more than its per-disk count."""
    b = bytearray(model)
    eocd = b.rfind(b"PK\x05\x06")
    b[eocd + 10] += 1
    return bytes(b)


def bomb():
    import io, zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("archive/version", b"3")
        z.writestr("archive/code/__torch__.py", b" " * (200 << 20))
    return buf.getvalue()


def REGRESSION(name):
    """A fuzzer's crash input, as committed in tests/fuzz/regressions/torchscript."""
    return open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "regressions",
                             "torchscript", name), "rb").read()


MODEL = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "resources", "models",
                          "mlp_backbone.pt"), "rb").read()


def make_templates():
    """Small real run folders the folder cases damage."""
    t = os.path.join(WORK, "templates")
    os.makedirs(t, exist_ok=True)
    def run(args):
        r = subprocess.run([CLI, "run", *args, "--out", t], capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            sys.exit(f"census: cannot make a template run: {r.stderr[-500:]}")
        return r.stdout.strip().splitlines()[-1]
    cf = run(["cf-regression", "--steps", "20", "--set", "log_every=10", "--set", "diagnostics.spectrum_every=10"])
    icnn = run(["icnn-landscape", "--steps", "20", "--set", "log_every=10", "--set",
                "diagnostics.checkpoint_every=10", "--set", "icnn.width=8", "--set", "task.n_train=512",
                "--set", "task.n_test=128", "--set", "icnn.quadrature_points=200", "--set", "seeds=[0]",
                "--set", "diagnostics.shoulder_every=2", "--set", "diagnostics.trace_coordinates=4"])
    resumable = run(["cf-regression", "--steps", "20", "--seeds", "2", "--set", "log_every=10",
                     "--set", "task.n_train=256", "--set", "backbone.hidden=[8]"])
    # As if killed: unit 1 not finished, the summary still running.
    with open(os.path.join(resumable, "summary.json"), "w") as f:
        json.dump({"status": "running", "runs": []}, f)
    state1 = os.path.join(resumable, "resume", "unit1.state")
    os.remove(state1)
    return {"cf": cf, "icnn": icnn, "resumable": resumable}


# What only a raw LibTorch (c10::Error) message holds: its C++ backtrace.
TRACE_MARKERS = ("frame #", "Exception raised from")


def summary_files(d):
    """The regular summary.json files under d (a case's FIFO or symlink is not read)."""
    paths = [os.path.join(root, f) for root, _, files in os.walk(d) for f in files
             if f == "summary.json"]
    return [p for p in paths if os.path.isfile(p) and not os.path.islink(p)]


def run_case(i, case):
    d = os.path.join(WORK, f"case{i:04d}")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for name, data in case.files.items():
        p = os.path.join(d, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if data is None:
            os.makedirs(p)
        else:
            with open(p, "wb") as f:
                f.write(data)
    if "spec.json" in case.files and case.files["spec.json"] is None:
        pass
    if case.setup:
        try:
            case.setup(d)
        except (OSError, subprocess.SubprocessError) as e:
            return "unclear", f"the census could not build the case: {e}"
    summaries_before = {p: open(p, "rb").read() for p in summary_files(d)}
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", OMP_WAIT_POLICY="PASSIVE")
    try:
        r = subprocess.run([CLI, *case.argv], cwd=d, capture_output=True, timeout=TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        return "hang", "timed out"
    err = r.stderr.decode(errors="replace")
    # No raw LibTorch stack trace in any output: stdout, stderr, the summary.json files it wrote.
    outputs = {"stdout": r.stdout.decode(errors="replace"), "stderr": err}
    for p in summary_files(d):
        text = open(p, "rb").read()
        if summaries_before.get(p) != text:
            outputs[os.path.relpath(p, d)] = text.decode(errors="replace")
    for where, text in outputs.items():
        for marker in TRACE_MARKERS:
            if marker in text:
                at = text.index(marker)
                return "trace", f"{where} holds '{marker}': ...{text[max(0, at - 200):at + 60]!r}"
    if r.returncode < 0 or r.returncode >= 128 or "AddressSanitizer" in err or "runtime error:" in err \
            or "terminate called" in err or "LeakSanitizer" in err:
        return "crash", f"exit {r.returncode}: {err[-400:]}"
    # Lost: a run folder made by a case of bad input that claims ok.
    for root, _, files in os.walk(os.path.join(d, "runs")) if case.expect_exit != 0 else []:
        if "summary.json" in files:
            try:
                if json.load(open(os.path.join(root, "summary.json"))).get("status") == "ok":
                    return "lost", f"{root} claims ok"
            except (ValueError, OSError):
                pass
    missing = [n for n in case.needles if n not in err]
    if r.returncode != case.expect_exit or missing:
        return "unclear", f"exit {r.returncode} (expected {case.expect_exit}), missing {missing}: {err.strip()[-300:]}"
    return "clear", err.strip().splitlines()[-1][:160] if err.strip() else ""


def main():
    global CLI, WORK
    args = sys.argv[1:]
    stride, jobs = int(os.environ.get("LIFTLAB_CENSUS_STRIDE", "1")), 2
    if "--stride" in args:
        i = args.index("--stride")
        stride = int(args[i + 1])
        del args[i:i + 2]
    if "--jobs" in args:
        i = args.index("--jobs")
        jobs = int(args[i + 1])
        del args[i:i + 2]
    CLI, WORK = os.path.abspath(args[0]), os.path.abspath(args[1])
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    cases = spec_cases() + set_cases() + csv_cases() + idx_cases() + cifar_cases() + torchscript_cases()
    cases += folder_cases(make_templates())
    # The "spec is a folder" case.
    for c in cases:
        if c.name == "spec is a folder":
            c.files = {"spec.json": None}
    picked = [(i, c) for i, c in enumerate(cases) if i % stride == 0]
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(lambda ic: (ic[1], run_case(*ic)), picked))
    kinds = []
    for c, _ in results:
        if c.kind not in kinds:
            kinds.append(c.kind)
    outcomes = ["clear", "unclear", "crash", "hang", "lost", "trace"]
    table = {k: {o: 0 for o in outcomes} for k in kinds}
    for c, (outcome, _) in results:
        table[c.kind][outcome] += 1
    print(f"{'input':<14} {'tried':>6} " + " ".join(f"{o:>8}" for o in outcomes))
    total = {o: 0 for o in outcomes}
    for k in kinds:
        row = table[k]
        print(f"{k:<14} {sum(row.values()):>6} " + " ".join(f"{row[o]:>8}" for o in outcomes))
        for o in outcomes:
            total[o] += row[o]
    print(f"{'all':<14} {sum(total.values()):>6} " + " ".join(f"{total[o]:>8}" for o in outcomes))
    bad = [(c, r) for c, r in results if r[0] != "clear"]
    for c, (outcome, why) in bad:
        print(f"  {outcome}: [{c.kind}] {c.name}: {why}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
