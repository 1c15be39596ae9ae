"""MongoDB wire protocol: a real mongod, or FerretDB managed by dbstand (port 27017)."""

from dbstand.targets.kinds import TargetKind

KIND = TargetKind(
    name="mongodb", title="MongoDB wire protocol", schemes=("mongodb",), default_port=27017,
    managed="dbstand.targets.mongodb.managed:ManagedFerretDB",
    ownership="dbstand.targets.mongodb.ownership:MongoOwnership",
)
