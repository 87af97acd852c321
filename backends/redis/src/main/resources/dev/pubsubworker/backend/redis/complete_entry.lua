-- complete of one record, shared by complete.lua and complete_all.lua. Returns 1 (DONE), 0
-- (absent, stale fence) or 2 (an unreadable record: nothing written). No lease check: a holder
-- whose lease lapsed but whose record was not reclaimed still commits. clock() gives the server's
-- time (read at most once per script).
-- Redis work: one HMGET; on success one HSET, and a PEXPIREAT only when the suppression window
-- ends after the key's current expiry (which claim set to leaseExpiry + ttl, so a complete
-- within the lease keeps it and Redis reaps the record a little after expiresAt, never before).
local function complete_entry(key, fence, ttl, clock)
  local r = read_record(key)
  local status = record_status(r)
  if status == 'unreadable' then
    return 2
  end
  if r[1] == 'DONE' then
    return 1
  end
  if status == 'absent' or r[2] ~= fence then
    return 0
  end
  local expiresAt = clock() + ttl
  local expiresText = int(expiresAt)
  redis.call('HSET', key, 'state', 'DONE', 'expiresAt', expiresText)
  if expiresAt > tonumber(r[4]) then
    redis.call('PEXPIREAT', key, expiresText)
  end
  return 1
end
