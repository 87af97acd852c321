-- purgeExpired, one batch: KEYS = candidate records (from SCAN); ARGV = offset, most to delete.
-- Deletes records whose expiresAt <= now on this script's clock; skips anything that is not one of
-- our hashes. Returns how many were deleted.
local now = now_ms()
local most = tonumber(ARGV[2])
local deleted = 0
for _, key in ipairs(KEYS) do
  if deleted >= most then
    break
  end
  local expiresAt = redis.pcall('HGET', key, 'expiresAt')
  if type(expiresAt) == 'string' and tonumber(expiresAt) and tonumber(expiresAt) <= now then
    redis.call('DEL', key)
    deleted = deleted + 1
  end
end
return deleted
