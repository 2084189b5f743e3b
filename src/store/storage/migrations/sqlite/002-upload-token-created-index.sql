-- Old upload tokens are pruned each time a token is made; without this index that scans the table.
CREATE INDEX upload_tokens_created ON upload_tokens(created);
