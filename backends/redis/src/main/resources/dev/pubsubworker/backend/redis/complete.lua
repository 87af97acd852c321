-- complete: KEYS[1] = record; ARGV = offset, fence, ttl ms. Returns complete_entry's reply.
return complete_entry(KEYS[1], ARGV[2], ARGV[3], now_ms)
