"""The Compare tab: one text through two to four models, side by side."""
