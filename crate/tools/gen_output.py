"""What every table generator here does with its text: write the Rust file, or with --check
compare it with the checked-in one and exit non-zero if they differ."""
import sys


def write_or_check(path, text: str, check: bool, command: str) -> None:
    """Writes `text` to `path` (LF line ends), or with `check` exits with a message naming
    `command` (how to regenerate) when the file is missing or different."""
    if check:
        try:
            with open(path, encoding="utf-8") as f:
                current = f.read()
        except FileNotFoundError:
            current = None
        if current != text:
            sys.exit(f"{path} is stale: run {command}")
        return
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    print(f"wrote {path}")
