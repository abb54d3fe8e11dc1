"""The corpus command's speed and memory (docs/PERFORMANCE.md, "Corpora").

On a generated text corpus (lines of the six development corpora, cycled; one document per
line), with one tokenizer file:

- `tokenprism encode --workers 2` against `--workers 1` (wall time, alternating rounds);
- the command against the in-process array call on the same documents
  (`Tokenizer.encode_batch_ids(docs, as_array=True)`, one thread and two), the documents
  already in memory;
- peak memory (the sum of the resident sets of the command and its workers, sampled every
  20 ms) on a large input and one ten times smaller.

Both worker counts' outputs are compared byte for byte. Prints a Markdown table and, with
--json, writes the figures.

    python3 scripts/bench/corpus_bench.py --large-mb 1000 --rounds 3
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

import tokenprism
from paths import CORPORA, bert_json, bpe_json, corpus


def tokenizer_file(name: str) -> Path:
    return bert_json() if name == "bert" else bpe_json(name)


def make_corpus(path: Path, size: int) -> None:
    """About `size` bytes of whole lines, the corpora's lines interleaved and cycled."""
    if path.is_file() and path.stat().st_size >= size:
        return
    pools = [corpus(lang).read_bytes().splitlines(keepends=True) for lang in CORPORA]
    block = b"".join(line for group in zip(*pools) for line in group if line.strip())
    tmp = path.with_suffix(".part")
    with open(tmp, "wb") as f:
        written = 0
        while written < size:
            chunk = block[: size - written]
            chunk = chunk[: chunk.rfind(b"\n") + 1]
            if not chunk:
                break
            f.write(chunk)
            written += len(chunk)
    os.replace(tmp, path)


def run_command(args: list[str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, peak summed RSS in bytes) of the command and its workers,
    sampled every 20 ms (the machine is shared: CPU time is the steadier figure)."""
    start = time.perf_counter()
    proc = psutil.Popen(
        [sys.executable, "-m", "tokenprism.cli", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    peak = 0
    cpu: dict[int, float] = {}
    stop = threading.Event()

    def poll() -> None:
        nonlocal peak
        while not stop.is_set():
            try:
                procs = [proc, *proc.children(recursive=True)]
            except psutil.Error:
                procs = []
            rss = 0
            for p in procs:
                try:
                    with p.oneshot():
                        rss += p.memory_info().rss
                        t = p.cpu_times()
                        cpu[p.pid] = t.user + t.system
                except psutil.Error:
                    pass
            peak = max(peak, rss)
            stop.wait(0.02)

    watcher = threading.Thread(target=poll)
    watcher.start()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    _, err = proc.communicate()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    stop.set()
    watcher.join()
    wall = time.perf_counter() - start
    if proc.returncode:
        sys.exit(f"tokenprism {' '.join(args)} failed:\n{err.decode()}")
    # The command itself exactly (it was waited for); its workers as last sampled.
    cpu[proc.pid] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, sum(cpu.values()), peak


def tree_digest(out: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(out.iterdir()):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokenizer", default="bert", choices=("bert", "gpt2", "qwen3"))
    ap.add_argument("--large-mb", type=int, default=1000, help="the large input (MB)")
    ap.add_argument("--speed-mb", type=int, default=100, help="the input of the speed rounds")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--shard-size", default="8M", help="of the speed rounds (the memory runs: the default)"
    )
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "corpus-bench")
    ap.add_argument("--executor", default=None, choices=("process", "thread"))
    ap.add_argument("--no-memory", action="store_true", help="the speed rounds only")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()

    tok_path = tokenizer_file(a.tokenizer)
    a.workdir.mkdir(parents=True, exist_ok=True)
    large = a.workdir / f"large-{a.large_mb}mb.txt"
    small = a.workdir / f"small-{a.large_mb // 10}mb.txt"
    speed = a.workdir / f"speed-{a.speed_mb}mb.txt"
    if not a.no_memory:
        make_corpus(large, a.large_mb * 1_000_000)
        make_corpus(small, a.large_mb * 100_000)
    make_corpus(speed, a.speed_mb * 1_000_000)

    def encode(inp: Path, workers: int, extra: list[str]) -> tuple[float, float, int, str]:
        out = a.workdir / f"out-{workers}"
        shutil.rmtree(out, ignore_errors=True)
        args = ["encode", "--tokenizer", str(tok_path), "--out", str(out), "--quiet", *extra]
        if a.executor:
            args += ["--executor", a.executor]
        wall, cpu, peak = run_command([*args, "--workers", str(workers), str(inp)])
        digest = tree_digest(out)
        shutil.rmtree(out)
        return wall, cpu, peak, digest

    def documents() -> list[str]:
        """The speed input's documents as the command reads them (--docs line), new str
        objects each time: a str caches its UTF-8 form once a call has asked for it."""
        return [line for line in speed.read_text(encoding="utf-8").split("\n") if line]

    speed_bytes = speed.stat().st_size

    times: dict[str, list[float]] = {"w1": [], "w2": [], "call1": [], "call2": []}
    cpus: dict[str, list[float]] = {k: [] for k in times}
    digests = set()
    loads = [os.getloadavg()[0]]
    for r in range(a.rounds):
        steps = ["w1", "w2", "call1", "call2"]
        steps = steps[r % 4 :] + steps[: r % 4]
        for step in steps:
            if step.startswith("w"):
                wall, cpu, _, digest = encode(speed, int(step[1]), ["--shard-size", a.shard_size])
                digests.add(digest)
            else:
                # A fresh tokenizer, as in the command: its caches start empty.
                tok = tokenprism.Tokenizer.from_file(str(tok_path))
                tok.no_padding()
                tok.no_truncation()
                docs = documents()
                t, c = time.perf_counter(), time.process_time()
                tok.encode_batch_ids(docs, False, int(step[-1]), as_array=True)
                wall, cpu = time.perf_counter() - t, time.process_time() - c
                del docs
            times[step].append(wall)
            cpus[step].append(cpu)
            print(f"round {r + 1} {step}: {wall:.2f} s, {cpu:.2f} s CPU", file=sys.stderr)
        loads.append(os.getloadavg()[0])
    if len(digests) != 1:
        sys.exit("one and two workers wrote different bytes")

    mem = {}
    for name, inp in () if a.no_memory else (("large", large), ("small", small)):
        wall, cpu, peak, _ = encode(inp, 2, [])
        mem[name] = {"bytes": inp.stat().st_size, "wall": wall, "cpu": cpu, "peak_rss": peak}
        print(f"{name}: {wall:.1f} s, {cpu:.1f} s CPU, peak {peak / 1e6:.0f} MB", file=sys.stderr)
    loads.append(os.getloadavg()[0])

    med = {k: statistics.median(v) for k, v in times.items()}
    cpu_med = {k: statistics.median(v) for k, v in cpus.items()}
    # Per-round ratios, so a slow spell hits both sides.
    w2_over_w1 = statistics.median(b / a_ for a_, b in zip(times["w1"], times["w2"]))
    result = {
        "tokenizer": a.tokenizer,
        "cpus": os.cpu_count(),
        "load_1min": loads,
        "speed_input_bytes": speed_bytes,
        "speed_shard_size": a.shard_size,
        "median_wall_seconds": med,
        "median_cpu_seconds": cpu_med,
        "mb_per_cpu_s": {k: speed_bytes / v / 1e6 for k, v in cpu_med.items()},
        "two_workers_wall_speedup": 1 / w2_over_w1,
        "two_workers_cpu_ratio": cpu_med["w2"] / cpu_med["w1"],
        "command_over_call_cpu": cpu_med["w1"] / cpu_med["call1"],
        "command_over_call_wall_1": med["w1"] / med["call1"],
        "command_over_call_wall_2": med["w2"] / med["call2"],
        "memory": mem,
    }
    if mem:
        result["peak_large_over_small"] = mem["large"]["peak_rss"] / mem["small"]["peak_rss"]
    print(json.dumps(result, indent=1))
    if a.json:
        a.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
