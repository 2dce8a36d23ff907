"""Data installed with Slabscope (package `slabscope.assets`): the example graphs, the icon and
the desktop entry, read through importlib.resources. The screenshots and the script that makes
them stay in the repository."""
