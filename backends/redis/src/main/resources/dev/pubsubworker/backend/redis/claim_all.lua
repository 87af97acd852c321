-- claimAll: KEYS = records (distinct; on a cluster all in one slot); ARGV = offset, then five per
-- key: lease ms, ttl ms, claim token, fingerprint, has fingerprint ("1"/"0").
-- Returns one reply per key, in order: claim_entry's reply, or {-1, error code} if a command failed
-- on that key (WRONGTYPE, OOM, READONLY, ...); such an entry wrote nothing, and the others go on.
-- TIME once for the whole batch.

-- The error code of a failed command caught with pcall (WRONGTYPE, OOM, READONLY, ...), never the
-- rest of its message; ERR for an error of the script itself.
local function error_code(e)
  local message = type(e) == 'table' and e.err or tostring(e)
  return string.match(message or '', '^%-?([A-Z][A-Z_]*) ') or 'ERR'
end

local now = now_ms()
local replies = {}
for i, key in ipairs(KEYS) do
  local a = 1 + (i - 1) * 5
  local ok, reply = pcall(claim_entry, key, now, tonumber(ARGV[a + 1]), ARGV[a + 2], ARGV[a + 3],
    ARGV[a + 5] == '1' and ' ' .. ARGV[a + 4] or '')
  if ok then
    replies[i] = reply
  else
    replies[i] = {-1, error_code(reply)}
  end
end
return replies
