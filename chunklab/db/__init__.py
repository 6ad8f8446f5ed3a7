"""Each service's database: SQLAlchemy sessions on SQLite or PostgreSQL, and the
Alembic migrations that bring a schema to its head at start."""
