-- Runs once, when the postgres volume is first initialised: one database per
-- service that keeps data, as the embedded default keeps one SQLite file each.
CREATE DATABASE ingest;
CREATE DATABASE evaluator;
