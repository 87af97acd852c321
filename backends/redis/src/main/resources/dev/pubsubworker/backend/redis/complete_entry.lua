-- complete of one record, shared by complete.lua and complete_all.lua. Returns 1 (DONE), 0
-- (absent, stale fence) or 2 (an unreadable record: nothing written). No lease check: a holder
-- whose lease lapsed but whose record was not reclaimed still commits. fence and ttl are the
-- arguments' text; clock() gives the server's time (read at most once per script, and only with a
-- test clock offset).
-- Redis work: GET and PEXPIRETIME (HMGET instead for a hash an earlier version wrote); on success
-- one SET of value and expiry: PX ttl, which Redis places on its own clock, so no TIME. The DONE
-- record's retention is the ttl, so its leaseExpiry reads as the time it was completed.
local function complete_entry(key, fence, ttl, clock)
  local state, storedFence, _, _, token, rest = read_from(key, redis.pcall('GET', key))
  if state == false then
    return 2
  end
  if state == 'DONE' then
    return 1
  end
  if not state or storedFence ~= fence then
    return 0
  end
  local value = 'DONE ' .. fence .. ' ' .. ttl .. ' ' .. token .. rest
  if ARGV[1] == '0' then
    redis.call('SET', key, value, 'PX', ttl)
  else
    redis.call('SET', key, value, 'PXAT', int(clock() + tonumber(ttl)))
  end
  return 1
end
