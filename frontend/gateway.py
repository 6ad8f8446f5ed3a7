"""The pages reach the services through ChunkLab's client library
(`chunklab.client`); these are the names they know it by."""

from chunklab.client import ChunkLab as Gateway
from chunklab.client import ClientError as GatewayError

__all__ = ["Gateway", "GatewayError"]
