"""What building the query embedder's onnxruntime session costs a cold process, per option.

Usage:
    python benchmarks/session_load.py GRAPH.onnx [--runs N] [--work DIR]

Each run is a fresh Python process that imports onnxruntime and builds one session of
GRAPH with the options `OnnxEmbedder._session` sets, changed by one setting: the graph
optimisation level (all, the default; extended; basic; none), the graph saved optimised
beside it and loaded with optimisations off, the same in ORT's own format (with its bytes
used in place, initializers included), and weight pre-packing off. Printed per setting:
the medians of the session's wall and CPU seconds (the import's apart), and whether its
output for one input is the default's bit for bit. The optimised copies go into `--work`
(a temporary directory by default).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

_RUN = r"""
import json, sys, time
import numpy as np
import onnxruntime as ort
path, level, extra, save = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
options = ort.SessionOptions()
options.intra_op_num_threads = 2
options.inter_op_num_threads = 1
options.add_session_config_entry("session.intra_op.allow_spinning", "0")
options.log_severity_level = 3
options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
for key, value in extra.items():
    options.add_session_config_entry(key, value)
if save:
    options.optimized_model_filepath = save
wall, cpu = time.perf_counter(), time.thread_time()
session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
ids = np.array([[101, 2073, 2024, 13735, 6521, 17159, 1029, 102]], dtype=np.int64)
feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
names = {i.name for i in session.get_inputs()}
out = session.run(None, {k: v for k, v in feed.items() if k in names})[0]
print(json.dumps({"wall": wall, "cpu": cpu, "out": out.tobytes().hex()}))
"""


def _once(path: Path, level: str, extra: dict[str, str], save: Path | None = None) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(path), level, json.dumps(extra), str(save or "")],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("graph", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--work", type=Path)
    opts = parser.parse_args()
    work = opts.work or Path(tempfile.mkdtemp(prefix="session-load-"))
    work.mkdir(parents=True, exist_ok=True)
    optimised, ort_format = work / "optimised.onnx", work / "optimised.ort"
    _once(opts.graph, "ORT_ENABLE_ALL", {}, optimised)
    _once(opts.graph, "ORT_ENABLE_ALL", {}, ort_format)
    direct = {
        "session.use_ort_model_bytes_directly": "1",
        "session.use_ort_model_bytes_for_initializers": "1",
    }
    settings = {
        "all (default)": (opts.graph, "ORT_ENABLE_ALL", {}),
        "extended": (opts.graph, "ORT_ENABLE_EXTENDED", {}),
        "basic": (opts.graph, "ORT_ENABLE_BASIC", {}),
        "none": (opts.graph, "ORT_DISABLE_ALL", {}),
        "saved optimised, none": (optimised, "ORT_DISABLE_ALL", {}),
        "ORT format, bytes in place": (ort_format, "ORT_ENABLE_ALL", direct),
        "no pre-packing": (opts.graph, "ORT_ENABLE_ALL", {"session.disable_prepacking": "1"}),
    }
    rows: dict[str, list[dict]] = {name: [] for name in settings}
    for _ in range(opts.runs):  # alternately: a load that drifts weighs on all alike
        for name, (path, level, extra) in settings.items():
            rows[name].append(_once(path, level, extra))
    reference = rows["all (default)"][0]["out"]
    for name, got in rows.items():
        wall = statistics.median(r["wall"] for r in got)
        cpu = statistics.median(r["cpu"] for r in got)
        same = all(r["out"] == reference for r in got)
        print(f"{name:<28} wall {wall * 1e3:6.0f} ms  CPU {cpu * 1e3:6.0f} ms  same output {same}")


if __name__ == "__main__":
    main()
