"""Clocks: the only source of time for every component (virtual discrete-event and real asyncio)."""
