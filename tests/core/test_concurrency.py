"""Many threads, many processes, one answer: encode_batch on threads, encodes from many
Python threads at once, pickled tokenizers in worker processes and on a Dask cluster all
give exactly the ids of a plain sequential run (and the reference's)."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import pickle

import tokenizers

import tokenprism
from paths import CORPORA, bert_dir, data_dir, require


def _tokenizers():
    path = require(bert_dir() / "tokenizer.json")
    ours = tokenprism.Tokenizer.from_file(str(path))
    ref = tokenizers.Tokenizer.from_file(str(path))
    for t in (ours, ref):
        t.no_truncation()
        t.no_padding()
    return ours, ref


def _documents(limit_bytes: int = 60_000) -> list[str]:
    docs: list[str] = []
    for lang in CORPORA:
        text = require(data_dir() / "corpora" / f"{lang}.txt").read_text(encoding="utf-8")[
            :limit_bytes
        ]
        docs.extend(line for line in text.split("\n") if line.strip())
    return docs


def test_encode_batch_threads_equal_sequential_and_reference():
    ours, ref = _tokenizers()
    docs = _documents()
    sequential = [ours.encode(d).ids for d in docs]
    assert sequential == [e.ids for e in ref.encode_batch(docs)]
    for threads in (1, 2, 3, 8):
        batch = ours.encode_batch(docs, num_threads=threads)
        assert [e.ids for e in batch] == sequential, threads
        assert [e.offsets for e in batch] == [ours.encode(d).offsets for d in docs[:200]] + [
            e.offsets for e in batch[200:]
        ]


def test_single_encodes_from_many_python_threads():
    ours, _ = _tokenizers()
    docs = _documents(20_000)
    want = [ours.encode(d).ids for d in docs]
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        # Each worker runs the whole list, interleaved with the others.
        futures = [pool.submit(lambda: [ours.encode(d).ids for d in docs]) for _ in range(8)]
        for f in futures:
            assert f.result(timeout=300) == want
        # encode_batch (which itself uses threads and releases the GIL) from threads too.
        futures = [pool.submit(lambda: [e.ids for e in ours.encode_batch(docs)]) for _ in range(4)]
        for f in futures:
            assert f.result(timeout=300) == want


def test_pickle_round_trip_keeps_settings():
    ours, _ = _tokenizers()
    ours.enable_truncation(16, strategy="only_first", direction="left")
    ours.enable_padding(length=20, pad_to_multiple_of=8, direction="left")
    ours.set_fast_paths(page_cache=False)
    back = pickle.loads(pickle.dumps(ours))
    assert back.truncation == ours.truncation
    assert back.padding == ours.padding
    assert back.fast_paths == ours.fast_paths
    text = "A sentence long enough to be truncated, with accents: café, naïve, Ωμέγα."
    assert back.encode(text).ids == ours.encode(text).ids
    assert back.encode(text).attention_mask == ours.encode(text).attention_mask


_worker_tokenizer = None


def _init_worker(blob):
    global _worker_tokenizer
    _worker_tokenizer = pickle.loads(blob)


def _encode_chunk(chunk):
    return [_worker_tokenizer.encode(d).ids for d in chunk]


def test_multiprocessing_pool_with_pickled_tokenizer():
    ours, ref = _tokenizers()
    docs = _documents(30_000)
    chunks = [docs[i : i + 50] for i in range(0, len(docs), 50)]
    blob = pickle.dumps(ours)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2, initializer=_init_worker, initargs=(blob,)) as pool:
        got = [ids for part in pool.map(_encode_chunk, chunks) for ids in part]
    assert got == [e.ids for e in ref.encode_batch(docs)]


_forked_tokenizer = None


def _encode_batch_in_child(docs):
    return _forked_tokenizer.encode_batch_ids(docs, True, 2)


def test_a_forked_child_runs_batches_on_threads_of_its_own():
    """A batch on two threads, then fork: the child inherits the parent's thread pool but not
    its threads, and must still finish its own two-thread batch."""
    global _forked_tokenizer
    ours, ref = _tokenizers()
    docs = _documents(20_000)
    want = [e.ids for e in ref.encode_batch(docs)]
    assert ours.encode_batch_ids(docs, True, 2) == want
    _forked_tokenizer = ours
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        got = pool.apply_async(_encode_batch_in_child, (docs,)).get(timeout=60)
    assert got == want


def test_dask_local_cluster_of_worker_processes():
    from dask.distributed import Client, LocalCluster

    ours, ref = _tokenizers()
    docs = _documents(30_000)
    chunks = [docs[i : i + 100] for i in range(0, len(docs), 100)]
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        with Client(cluster) as client:
            # The tokenizer itself travels to the workers (pickled by Dask).
            remote = client.scatter(ours, broadcast=True)
            futures = [
                client.submit(lambda tok, c: [tok.encode(d).ids for d in c], remote, c)
                for c in chunks
            ]
            got = [ids for part in client.gather(futures) for ids in part]
            workers = {w for w in client.run(lambda: __import__("os").getpid()).values()}
    assert len(workers) == 2
    assert got == [e.ids for e in ref.encode_batch(docs)]
