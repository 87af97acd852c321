-- claim of one record, shared by claim.lua and claim_all.lua. Returns {1, fence, leaseExpiry}
-- (Won), {2, leaseExpiry, fingerprint} (HeldByOther), {3, 0, fingerprint} (AlreadyDone) or {4}
-- (an unreadable record: nothing written). ttl is the ttl's text; rest is '' or ' ' .. fingerprint.
-- Redis work: on a key without a record one SET NX ... GET, which creates it (value and expiry in
-- one command). On a key with a record that SET writes nothing and returns the value; then
-- PEXPIRETIME (or, for a hash an earlier version wrote, HMGET), and on Won one SET that replaces
-- the record, value and expiry together.
local function claim_entry(key, now, lease, ttl, token, rest)
  local leaseExpiry = now + lease
  local expiresAt = leaseExpiry + tonumber(ttl)
  local expiresText = int(expiresAt)
  local got = redis.pcall('SET', key, 'CLAIMED 1 ' .. ttl .. ' ' .. token .. rest, 'NX', 'PXAT',
    expiresText, 'GET')
  if got == false then
    return {1, 1, leaseExpiry}
  end
  local state, fenceText, storedLease, storedExpiry, storedToken, storedRest = read_from(key, got)
  if state == false then
    return {4}
  end
  local fence = 1
  if state then
    if state == 'CLAIMED' and storedToken == token and now < storedExpiry then
      -- The caller's own claim, retried after a lost response: same fence, lease renewed.
      fence = tonumber(fenceText)
    elseif state == 'CLAIMED' and now < storedLease then
      return {2, storedLease, storedRest ~= '' and string.sub(storedRest, 2)}
    elseif state == 'DONE' and now < storedExpiry then
      return {3, 0, storedRest ~= '' and string.sub(storedRest, 2)}
    else
      -- A lapsed lease or suppression window: reclaim over the old record, raising its fence (one
      -- more, or 1 after MAX: it never overflows).
      fence = tonumber(fenceText) + 1
      if fence > MAX then
        fence = 1
      end
      fenceText = int(fence)
    end
  else
    fenceText = '1'
  end
  redis.call('SET', key, 'CLAIMED ' .. fenceText .. ' ' .. ttl .. ' ' .. token .. rest, 'PXAT',
    expiresText)
  return {1, fence, leaseExpiry}
end
