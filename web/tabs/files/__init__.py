"""The Files tab: a whole file's token count, and a text cut into chunks of at most N tokens."""
