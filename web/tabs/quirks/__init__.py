"""The Quirks tab: the textbook's quirks explained by tokenization, live."""
