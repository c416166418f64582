"""Alembic environment: run with the connection the service hands over (see migrate.py)."""

from alembic import context

from stepkit_web.db import metadata

config = context.config
connection = config.attributes.get("connection")
if connection is None:  # pragma: no cover - `alembic` on the command line
    from stepkit_web.db import make_engine

    engine = make_engine(config.get_main_option("sqlalchemy.url"))
    with engine.connect() as connection:
        context.configure(connection=connection, target_metadata=metadata)
        with context.begin_transaction():
            context.run_migrations()
else:
    context.configure(connection=connection, target_metadata=metadata)
    with context.begin_transaction():
        context.run_migrations()
