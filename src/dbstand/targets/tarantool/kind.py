"""Tarantool: binary protocol on port 3301; dbstand's objects are spaces, not tables."""

from dbstand.targets.kinds import TargetKind

KIND = TargetKind(
    name="tarantool", title="Tarantool", schemes=("tarantool",), default_port=3301,
    admin_stacks=("tarantool",),
    managed="dbstand.targets.tarantool.managed:ManagedTarantool",
    statements="box_stat",
    ownership="dbstand.targets.tarantool.ownership:TarantoolOwnership",
    speaks_first=True, greeting="dbstand.targets.greeting:is_tarantool",
    run_lock="dbstand.targets.tarantool.lock:hold",
    default_stacks={"kv": ("tarantool",)},
)
