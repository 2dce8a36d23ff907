"""Pieces the views share: colours and the palette, byte axes, buffer details and emphasis, legends,
range zoom, the rectangle layer, overlays and small widgets. Imports no other view folder."""
