"""The `tokenprism` command: encode and count corpora, explain one text (tokenprism.corpus)."""

from __future__ import annotations

import json
import signal
import sys

import click

from . import corpus

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def _size(_ctx, _param, value: str) -> int:
    text = value.strip().upper().removesuffix("B").removesuffix("I")
    unit = text[-1:] if text[-1:] in _UNITS else ""
    try:
        n = float(text[: len(text) - len(unit)]) * _UNITS[unit]
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a size (e.g. 64M, 512K, 1G)") from None
    if n < 1:
        raise click.BadParameter("must be at least one byte")
    return int(n)


def _fail(message: str, code: int = 1):
    click.echo(f"tokenprism: error: {message}", err=True)
    sys.exit(code)


def _reading_options(f):
    options = [
        click.option(
            "--tokenizer",
            "tokenizer",
            required=True,
            type=click.Path(dir_okay=False),
            help="tokenizer.json, .model, tekken.json, .tiktoken or vocab.txt.",
        ),
        click.option(
            "--docs",
            type=click.Choice(corpus.DOCS_MODES),
            default="line",
            show_default=True,
            help="Text files: one document per file, per line, or per run of non-blank lines.",
        ),
        click.option(
            "--field",
            default="text",
            show_default=True,
            help="The string field of JSON lines, the column of Parquet files.",
        ),
        click.option(
            "--errors",
            type=click.Choice(corpus.ERRORS_MODES),
            default="strict",
            show_default=True,
            help="Invalid UTF-8: stop, replace with U+FFFD, or skip the document.",
        ),
        click.option("--add-special-tokens", is_flag=True, help="The tokenizer's template tokens."),
        click.option("--append-eos", is_flag=True, help="An end-of-text id after each document."),
        click.option("--eos-token", default=None, help="The token --append-eos appends."),
        click.option(
            "--shard-size",
            default="64M",
            callback=_size,
            show_default=True,
            help="Input bytes per shard (the unit of work; memory grows with it).",
        ),
        click.option(
            "--workers",
            type=click.IntRange(min=1),
            default=None,
            help="Parallel workers (default: one per core, at most one per 16 MB of input).",
        ),
        click.option(
            "--executor",
            type=click.Choice(corpus.EXECUTORS),
            default="auto",
            show_default=True,
            help="Workers as processes or threads (auto: threads for text and JSONL, which "
            "are read and encoded without the GIL; processes for Parquet).",
        ),
        click.option(
            "--dask",
            "dask",
            default=None,
            metavar="ADDRESS",
            help="Run the shards on this Dask scheduler (tcp://host:8786).",
        ),
        click.option("--quiet", "-q", is_flag=True, help="No progress bar."),
        click.argument("inputs", nargs=-1, required=True, type=click.Path(dir_okay=False)),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _interrupt(_signum, _frame):
    raise KeyboardInterrupt


@click.group()
@click.version_option(package_name="tokenprism")
def main() -> None:
    """Tokenize corpora with tokenprism."""
    # SIGTERM stops a run as Ctrl-C does: the workers' pool is shut down on the way out.
    signal.signal(signal.SIGTERM, _interrupt)


@main.command()
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Output folder.")
@_reading_options
def encode(out, quiet, **kwargs) -> None:
    """Tokenize INPUTS (text, .jsonl[.gz], .parquet) into .npy shards and OUT/index.json."""
    try:
        index = corpus.encode_files(
            kwargs.pop("inputs"),
            kwargs.pop("tokenizer"),
            out,
            progress=not quiet and None,
            log=None if quiet else lambda m: click.echo(m, err=True),
            **kwargs,
        )
    except corpus.CorpusError as e:
        _fail(str(e))
    except KeyboardInterrupt:
        _fail("interrupted; the same command resumes the run", 130)
    click.echo(
        f"{index['documents']} documents, {index['tokens']} tokens ({index['dtype']}) in "
        f"{len(index['shards'])} shards: {out}/{corpus.INDEX_NAME}"
    )


def _ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@_reading_options
def count(as_json, quiet, **kwargs) -> None:
    """Documents, bytes, tokens, chars per token and tokens per word of INPUTS."""
    try:
        result = corpus.count_files(
            kwargs.pop("inputs"), kwargs.pop("tokenizer"), progress=not quiet and None, **kwargs
        )
    except corpus.CorpusError as e:
        _fail(str(e))
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    if as_json:
        click.echo(json.dumps(result, indent=1, ensure_ascii=False))
        return
    rows = [(p["path"], p) for p in result["inputs"]] + [("total", result["total"])]
    width = max(len(name) for name, _ in rows)
    head = ("documents", "bytes", "tokens", "chars/token", "tokens/word")
    click.echo(f"{'input':<{width}}  " + "  ".join(f"{h:>12}" for h in head))
    for name, p in rows:
        cells = (p["documents"], p["bytes"], p["tokens"])
        line = "  ".join(f"{c:>12}" for c in cells)
        ratios = f"{_ratio(p['chars_per_token']):>12}  {_ratio(p['tokens_per_word']):>12}"
        click.echo(f"{name:<{width}}  {line}  {ratios}")


@main.command()
@click.option(
    "--tokenizer",
    "tokenizer",
    required=True,
    type=click.Path(dir_okay=False),
    help="tokenizer.json, .model, tekken.json, .tiktoken or vocab.txt.",
)
@click.argument("text")
def explain(tokenizer, text) -> None:
    """Each stage of the tokenizer on TEXT, then its tokens and ids."""
    try:
        tok = corpus.load_tokenizer(tokenizer)
        trace = tok.trace(text)
    except corpus.CorpusError as e:
        _fail(str(e))
    except ValueError as e:
        _fail(f"{tokenizer}: {e}")
    for stage in trace["stages"]:
        click.echo(f"{stage['name']:<20} {stage['text']!r}")
    for stage in trace.get("pre_tokenizer_stages", []):
        pieces = [p["text"] for p in stage["pieces"]]
        click.echo(f"{stage['name']:<20} {pieces!r}")
    click.echo(f"{'tokens':<20} {trace['tokens']!r}")
    click.echo(f"{'ids':<20} {trace['ids']!r}")


if __name__ == "__main__":
    main()
