"""How the views show a plan, kept in the session beside the plan's settings, so that an export
or a session file can set them and a picture does not depend on what was last clicked."""

from __future__ import annotations

import math
from dataclasses import dataclass

ADDRESSES = ("planned", "pytorch")
SLAB_VIEWS = ("lanes", "step")
TABS = ("slab", "lifetime", "timeline", "allocator")
COLOURINGS = ("kind", "frame")
VIEW_KEYS = ("addresses", "slab", "tab", "zoom", "follow_lanes", "colours")


@dataclass
class ViewSettings:
    """`addresses`: where the lifetime map draws a snapshot's blocks ("planned" offsets or
    "pytorch" addresses). `slab`: the slab bar's "lanes" or one "step" (None: by the plan's
    size). `tab`: the bottom panel brought forward when the window opens. `zoom`: the bytes
    the slab bar shows, `(first, last)`, once the user zoomed (None: the whole slab, refitted
    on every plan). `follow_lanes`: whether the bar's lanes fill its height as the bytes in
    view change (False once the user zoomed or panned the lanes themselves). `colours`: buffers
    coloured by "kind" (a snapshot's categories) or, for a snapshot, by first user "frame"."""

    addresses: str = "planned"
    slab: str | None = None
    tab: str = "slab"
    zoom: tuple[float, float] | None = None
    follow_lanes: bool = True
    colours: str = "kind"

    def to_json(self) -> dict:
        """The settings as a session file stores them."""
        return {"addresses": self.addresses, "slab": self.slab, "tab": self.tab,
                "zoom": list(self.zoom) if self.zoom is not None else None,
                "follow_lanes": self.follow_lanes, "colours": self.colours}


def view_settings_from(data) -> ViewSettings:
    """Settings from a session file's `view` object; a ValueError names the first wrong field
    (missing fields keep their defaults)."""
    if not isinstance(data, dict):
        raise ValueError(f"'view' must be an object, got {_shown(data)}")
    for key in data:
        if key not in VIEW_KEYS:
            raise ValueError(f"'view' has an unknown key {_shown(key)}; known: {', '.join(VIEW_KEYS)}")
    settings = ViewSettings()
    for key, known in (("addresses", ADDRESSES), ("slab", SLAB_VIEWS + (None,)), ("tab", TABS),
                       ("colours", COLOURINGS)):
        value = data.get(key, getattr(settings, key))
        if not (value is None or isinstance(value, str)) or value not in known:
            raise ValueError(f"view {key!r} must be one of "
                             f"{', '.join(str(k) for k in known)}, got {_shown(value)}")
        setattr(settings, key, value)
    zoom = data.get("zoom")
    if zoom is not None:
        if not (isinstance(zoom, list) and len(zoom) == 2
                and all(type(v) in (int, float) and math.isfinite(v) for v in zoom)
                and zoom[0] < zoom[1]):
            raise ValueError(f"view 'zoom' must be [first, last] bytes with first < last, "
                             f"or null, got {_shown(zoom)}")
        settings.zoom = (float(zoom[0]), float(zoom[1]))
    follow = data.get("follow_lanes", True)
    if type(follow) is not bool:
        raise ValueError(f"view 'follow_lanes' must be true or false, got {_shown(follow)}")
    settings.follow_lanes = follow
    return settings


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:60]}..."
