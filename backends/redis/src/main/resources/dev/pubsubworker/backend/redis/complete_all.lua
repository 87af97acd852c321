-- completeAll: KEYS = records (distinct; on a cluster all in one slot); ARGV = offset, then two
-- per key: fence, ttl ms.
-- Returns one reply per key, in order: complete_entry's 1 or 0, or {-1, error code} if a command
-- failed on that key; such an entry wrote nothing, and the others go on. TIME at most once.

-- The error code of a failed command caught with pcall (WRONGTYPE, OOM, READONLY, ...), never the
-- rest of its message; ERR for an error of the script itself.
local function error_code(e)
  local message = type(e) == 'table' and e.err or tostring(e)
  return string.match(message or '', '^%-?([A-Z][A-Z_]*) ') or 'ERR'
end

local now
local function clock()
  if not now then
    now = now_ms()
  end
  return now
end
local replies = {}
for i, key in ipairs(KEYS) do
  local a = 1 + (i - 1) * 2
  local ok, reply = pcall(complete_entry, key, ARGV[a + 1], ARGV[a + 2], clock)
  if ok then
    replies[i] = reply
  else
    replies[i] = {-1, error_code(reply)}
  end
end
return replies
