-- complete: KEYS[1] = record; ARGV = offset, fence, ttl ms. Returns 1 (DONE) or 0 (absent, stale fence).
-- No lease check: a holder whose lease lapsed but whose record was not reclaimed still commits.
local key = KEYS[1]
local r = redis.call('HMGET', key, 'state', 'fence')
if r[1] == 'DONE' then
  return 1
end
if r[1] ~= 'CLAIMED' or r[2] ~= ARGV[2] then
  return 0
end
local expiresAt = now_ms() + tonumber(ARGV[3])
redis.call('HSET', key, 'state', 'DONE', 'expiresAt', int(expiresAt))
redis.call('PEXPIREAT', key, int(expiresAt))
return 1
