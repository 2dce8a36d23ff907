"""The public entry point to the session state: `from app.session import Session`.

The state itself lives in `app/state/`; scripts, tests and benchmarks import it from here.
"""

from slabscope.app.state.session import Session

__all__ = ["Session"]
