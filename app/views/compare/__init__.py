"""The Compare view: the open graph against a second run, live-bytes curves and attribution."""
