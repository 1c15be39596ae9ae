"""service_descr objects in the two dialects of the protocol.

Version 0 names things `parking_object_id`, `plate_number`, `hours`; versions 1 and
2 say `parking_id`, `registration_plate`, `duration` (minutes). All values are strings.
"""

from __future__ import annotations

GSI = "get_service_info"
CREATE = "create_reservation"
PAY = "pay_reservation"
CANCEL = "cancel_reservation"
STOP = "stop_service"
ACCOUNT = "get_user_account"
TRANSFER = "account_transfer"
ISSUE = "issue_ticket"
LEAVE = "leave_parking"
PLATE = "check_plate_number"

PARK_A = "1333"      # 8000 places, 51/h: the prepaid sessions
PARK_B = "15001"     # 5000 places, 60/h: the ticket


def descr(version: int, park: str | None, plate: str | None = None,
          minutes: int | str | None = None, ticket: str | None = None,
          hours: int | str | None = None) -> dict[str, str]:
    """A descriptor in `version`'s dialect; None leaves a key out."""
    if version == 0:
        pairs = {"parking_object_id": park, "plate_number": plate, "hours": hours}
    else:
        pairs = {"parking_id": park, "registration_plate": plate, "duration": minutes}
    pairs["user_ticket"] = ticket
    return {k: str(v) for k, v in pairs.items() if v is not None}
