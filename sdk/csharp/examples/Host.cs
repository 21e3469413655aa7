// A Unity-style host over the Rendezvous binding: keep the listing's
// presence, accept and punch joiners, echo every game datagram. The REST
// answer's fields come as arguments (the game's own HTTP client makes the
// calls). Prints one line per event; never prints the token.
//   mono Host.exe MEDIATOR PRESENCE_HANDLE PRESENCE_TOKEN INTERVAL_S SECONDS [API LISTING_ID]
// With API and LISTING_ID (and the publisher's bearer token in RDV_TOKEN)
// the host fetches its relay credential when the library asks for one (a
// relay-only attempt, or the fallback after a failed punch); without them
// it declines and that attempt fails.
using System;
using System.Diagnostics;
using System.Net;
using System.Text;
using System.Text.RegularExpressions;
using System.Threading;
using Rendezvous;

static class HostExample
{
    static int Main(string[] args)
    {
        var clock = Stopwatch.StartNew();
        var deadline = ulong.Parse(args[4]) * 1000;
        using (var ctx = new Context("127.0.0.1:0"))
        {
            ctx.HostStart((ulong)clock.ElapsedMilliseconds, args[0], args[1], args[2], uint.Parse(args[3]));
            Console.WriteLine("listening " + ctx.LocalEndpoint);
            var buf = new byte[1200];
            var prefix = Encoding.ASCII.GetBytes("echo: ");
            while ((ulong)clock.ElapsedMilliseconds < deadline)
            {
                ulong now = (ulong)clock.ElapsedMilliseconds;
                ulong next = ctx.Update(now); // one call per tick: timers, socket, punch
                Event ev;
                while (ctx.TryNextEvent(out ev))
                {
                    switch (ev.Type)
                    {
                        case EventType.Presence: Console.WriteLine("presence " + ev.Addr); break;
                        case EventType.Attempt: Console.WriteLine("attempt " + ev.HandleText()); break;
                        case EventType.Introduced: Console.WriteLine("introduced " + ev.HandleText() + " " + ev.Addr); break;
                        case EventType.Connected:
                            Console.WriteLine("connected " + ev.HandleText() + " " + ev.Addr + " path=" + ev.Path);
                            break;
                        case EventType.Failed: Console.WriteLine("failed " + ev.HandleText() + " " + (Error)ev.Code); break;
                        case EventType.Rejected: Console.WriteLine("rejected " + ev.HandleText() + " " + ev.Code); break;
                        case EventType.Reported: Console.WriteLine("reported " + ev.HandleText()); break;
                        case EventType.RelayOnly:
                        case EventType.RelayFallback:
                            Console.WriteLine((ev.Type == EventType.RelayOnly ? "relay-only " : "relay-fallback ") + ev.HandleText());
                            Relay(ctx, (ulong)clock.ElapsedMilliseconds, ev.HandleText(), args);
                            break;
                    }
                }
                int n;
                Endpoint from;
                while (ctx.TryReceive(buf, out n, out from))
                {
                    var reply = new byte[prefix.Length + n];
                    Buffer.BlockCopy(prefix, 0, reply, 0, prefix.Length);
                    Buffer.BlockCopy(buf, 0, reply, prefix.Length, n);
                    ctx.Send(reply, reply.Length, from);
                }
                Console.Out.Flush();
                now = (ulong)clock.ElapsedMilliseconds;
                Thread.Sleep(next > now ? (int)Math.Min(next - now, 10) : 0);
            }
        }
        return 0;
    }

    // Relay fetches the host's relay credential for attempt handle (the game's
    // own HTTP client; UnityWebRequest in Unity) and hands it to the library,
    // or declines when there is none.
    static void Relay(Context ctx, ulong now, string handle, string[] args)
    {
        string token = Environment.GetEnvironmentVariable("RDV_TOKEN");
        if (args.Length == 7 && token != null)
        {
            try
            {
                using (var web = new WebClient())
                {
                    web.Headers[HttpRequestHeader.Authorization] = "Bearer " + token;
                    var body = web.DownloadString(args[5] + "/v1/listings/" + args[6] + "/join-attempts/" + handle + "/relay");
                    var server = Regex.Match(body, "\"urls\":\\[\"turn:([^?\"]+)");
                    var user = Regex.Match(body, "\"username\":\"([^\"]+)\"");
                    var credential = Regex.Match(body, "\"credential\":\"([^\"]+)\"");
                    if (server.Success && user.Success && credential.Success)
                    {
                        ctx.RelayStart(now, handle, server.Groups[1].Value, user.Groups[1].Value, credential.Groups[1].Value);
                        Console.WriteLine("relay " + handle + " via " + server.Groups[1].Value); // never the credential
                        return;
                    }
                }
            }
            catch (WebException e)
            {
                Console.WriteLine("relay credential: " + e.Status); // 409 relay_unavailable, 404: no relay
            }
        }
        Console.WriteLine("relay-declined " + handle);
        ctx.RelayDecline(now, handle);
    }
}
