"""What the whole page shares: the node tree every view builds (dom), characters and
diffs (chars), the share link (link), and the DOM layer's helpers in Pyodide (browser)."""
