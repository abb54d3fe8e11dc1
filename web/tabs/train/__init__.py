"""The Train tab: BPE training and the textbook chapter's exercises."""
