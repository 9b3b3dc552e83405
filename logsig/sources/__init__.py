"""The source stage: where raw records come from (Kafka, files and stdin)."""
