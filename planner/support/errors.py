"""Errors the planner raises: one-line messages that name the offending item."""


class PlanError(Exception):
    """A graph, request order or plan that cannot be planned; the message names the culprit."""


class CapacityError(PlanError):
    """The placing algorithm found no offset for a request within the slab's capacity.

    This says that *this algorithm* found no arrangement, not that none exists.
    """

    def __init__(self, message: str, request_index: int, request_name: str, bytes_: int):
        super().__init__(message)
        self.request_index = request_index
        self.request_name = request_name
        self.bytes = bytes_
