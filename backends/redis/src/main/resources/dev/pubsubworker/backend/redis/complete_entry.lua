-- complete of one record, shared by complete.lua and complete_all.lua. Returns 1 (DONE) or 0
-- (absent, stale fence). No lease check: a holder whose lease lapsed but whose record was not
-- reclaimed still commits. clock() gives the server's time (read at most once per script).
-- Redis work: one HMGET; on success one HSET, and a PEXPIREAT only when the suppression window
-- ends after the key's current expiry (which claim set to leaseExpiry + ttl, so a complete
-- within the lease keeps it and Redis reaps the record a little after expiresAt, never before).
local function complete_entry(key, fence, ttl, clock)
  local r = redis.call('HMGET', key, 'state', 'fence', 'expiresAt')
  if r[1] == 'DONE' then
    return 1
  end
  if r[1] ~= 'CLAIMED' or r[2] ~= fence then
    return 0
  end
  local expiresAt = clock() + ttl
  local expiresText = int(expiresAt)
  redis.call('HSET', key, 'state', 'DONE', 'expiresAt', expiresText)
  if expiresAt > tonumber(r[3]) then
    redis.call('PEXPIREAT', key, expiresText)
  end
  return 1
end
