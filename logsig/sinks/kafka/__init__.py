"""The Kafka sink: record building (pure) and the idempotent producer."""
