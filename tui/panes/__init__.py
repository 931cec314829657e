"""The eight panes of the workbench, in the order the digits 1–8 select them."""
