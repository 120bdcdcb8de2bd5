-- An agent's echo cancellation (issue 35, docs/echo.md): 'auto' cancels the bot's echo on phone
-- lines and not on web calls (the browser already does), 'on' and 'off' force it either way.
ALTER TABLE agents ADD COLUMN echo_cancellation text NOT NULL DEFAULT 'auto'
  CHECK (echo_cancellation IN ('auto', 'on', 'off'));
