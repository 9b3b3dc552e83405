"""Discovery: what the catalog does not know yet, counted by template in bounded memory."""
