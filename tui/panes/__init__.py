"""The panes of the workbench. :data:`tui.pane_list.PANES` lists them, in digit order."""
