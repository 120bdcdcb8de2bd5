// Exotel's webhook secret (docs/telephony-websocket.md). Exotel signs nothing: its dynamic-URL
// request must carry this secret (Basic or ?secret=). Its calls have no REST control here.

export interface ExotelSettings {
  webhookSecret?: string;
}

export function exotelSettings(env: Record<string, string | undefined>): ExotelSettings {
  return { webhookSecret: env.EXOTEL_WEBHOOK_SECRET || undefined };
}
