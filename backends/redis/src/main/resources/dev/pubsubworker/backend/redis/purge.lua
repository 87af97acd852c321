-- purgeExpired, one batch: KEYS = candidate records (from SCAN); ARGV = offset, most to delete.
-- Deletes records whose expiresAt <= now on this script's clock: a string's expiresAt is its Redis
-- expiry (which Redis acts on by itself, so this finds them only under a test clock offset), a
-- hash's (an earlier version's record) its expiresAt field. Skips anything else. Returns how many
-- were deleted.
local now = now_ms()
local most = tonumber(ARGV[2])
local deleted = 0
for _, key in ipairs(KEYS) do
  if deleted >= most then
    break
  end
  local expiresAt = redis.pcall('HGET', key, 'expiresAt')
  if type(expiresAt) == 'table' and redis.call('TYPE', key)['ok'] == 'string' then
    expiresAt = redis.call('PEXPIRETIME', key)
    if expiresAt < 0 then
      expiresAt = false
    end
  end
  if (type(expiresAt) == 'string' or type(expiresAt) == 'number') and tonumber(expiresAt)
      and tonumber(expiresAt) <= now then
    redis.call('DEL', key)
    deleted = deleted + 1
  end
end
return deleted
