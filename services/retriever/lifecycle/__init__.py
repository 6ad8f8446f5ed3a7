"""How indexed chunks live and leave: index sets and their retention,
freshness windows, the sweeper and cold storage, the write journal that
settles writes a killed process left, and the periodic tasks."""
