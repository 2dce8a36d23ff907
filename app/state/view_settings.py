"""How the views show a plan, kept in the session beside the plan's settings, so that an export
or a session file can set them and a picture does not depend on what was last clicked."""

from __future__ import annotations

from dataclasses import dataclass

ADDRESSES = ("planned", "pytorch")
SLAB_VIEWS = ("lanes", "step")
TABS = ("slab", "lifetime", "timeline")


@dataclass
class ViewSettings:
    """`addresses`: where the lifetime map draws a snapshot's blocks ("planned" offsets or
    "pytorch" addresses). `slab`: the slab bar's "lanes" or one "step" (None: by the plan's
    size). `tab`: the bottom panel brought forward when the window opens."""

    addresses: str = "planned"
    slab: str | None = None
    tab: str = "slab"
