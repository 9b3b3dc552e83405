"""The sink stage: where incidents and dead letters go (Kafka, Alertmanager, stdout)."""
