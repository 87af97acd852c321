-- complete of one record, shared by complete.lua and complete_all.lua. Returns 1 (DONE), 0
-- (absent, stale fence) or 2 (an unreadable record: nothing written). No lease check: a holder
-- whose lease lapsed but whose record was not reclaimed still commits. clock() gives the server's
-- time (read at most once per script, and only with a test clock offset).
-- Redis work: GET and PEXPIRETIME (HMGET instead for a hash an earlier version wrote); on success
-- one SET of value and expiry: PX ttl, which Redis places on its own clock, so no TIME. The DONE
-- record's retention is the ttl, so its leaseExpiry reads as the time it was completed.
local function complete_entry(key, fence, ttl, clock)
  local r = read_record(key)
  if r == false then
    return 2
  end
  if r and r[1] == 'DONE' then
    return 1
  end
  if not r or r[2] ~= fence then
    return 0
  end
  local value = encode('DONE', fence, ttl, r[5], r[6])
  if ARGV[1] == '0' then
    redis.call('SET', key, value, 'PX', int(ttl))
  else
    redis.call('SET', key, value, 'PXAT', int(clock() + ttl))
  end
  return 1
end
