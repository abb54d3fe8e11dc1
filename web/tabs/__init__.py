"""One package per tab of the page: tokenize, bpe, train, bench."""
