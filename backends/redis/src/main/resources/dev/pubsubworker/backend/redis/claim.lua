-- claim: KEYS[1] = record; ARGV = offset, lease ms, ttl ms, claim token, fingerprint, has fingerprint ("1"/"0").
-- Returns claim_entry's reply. TIME once, then claim_entry.
return claim_entry(KEYS[1], now_ms(), tonumber(ARGV[2]), ARGV[3], ARGV[4],
  ARGV[6] == '1' and ' ' .. ARGV[5] or '')
