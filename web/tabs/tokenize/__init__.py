"""The tokenize tab: the BERT normalizer and WordPiece, step by step."""
