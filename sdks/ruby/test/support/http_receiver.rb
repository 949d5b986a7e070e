# frozen_string_literal: true

require "socket"

# A minimal HTTP/1.1 server on 127.0.0.1 and a free port, standard library only (WEBrick
# left Ruby's default gems in 3.0). It records every request and answers each with the
# responder's [status, headers, body] (200 and an empty body without one), closing the
# connection after every answer.
class HTTPReceiver
  Request = Struct.new(:method, :path, :headers, :body) do
    def header(name)
      headers.find { |key, _| key.casecmp?(name) }&.last
    end
  end

  attr_reader :port

  def initialize(&responder)
    @responder = responder || ->(_request, _index) { [200, {}, ""] }
    @requests = []
    @lock = Mutex.new
    @arrived = ConditionVariable.new
    @server = TCPServer.new("127.0.0.1", 0)
    @port = @server.addr[1]
    @thread = Thread.new { serve }
  end

  def url(path = "")
    "http://127.0.0.1:#{port}#{path}"
  end

  # The requests so far, once there are `count` of them or `timeout` seconds have passed.
  def wait_for(count = 1, timeout: 30)
    deadline = clock + timeout
    @lock.synchronize do
      @arrived.wait(@lock, deadline - clock) while @requests.size < count && clock < deadline
      @requests.dup
    end
  end

  def requests
    @lock.synchronize { @requests.dup }
  end

  def close
    @server.close
    @thread.join
  end

  private

  def clock
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  def serve
    loop do
      socket = begin
        @server.accept
      rescue IOError, SystemCallError
        break # closed by #close
      end
      begin
        handle(socket)
      rescue IOError, SystemCallError
        nil # a client that went away; keep serving the others
      ensure
        socket.close
      end
    end
  end

  def handle(socket)
    method, path = socket.gets.to_s.split
    return unless method

    headers = {}
    while (line = socket.gets) && line != "\r\n"
      name, value = line.split(":", 2)
      headers[name] = value.to_s.strip
    end
    length = headers.find { |key, _| key.casecmp?("Content-Length") }&.last.to_i
    request = Request.new(method, path, headers, length.positive? ? socket.read(length) : "".b)
    index = @lock.synchronize do
      @requests << request
      @arrived.broadcast
      @requests.size - 1
    end
    status, reply_headers, body = @responder.call(request, index)
    reply = "HTTP/1.1 #{status} Reply\r\n"
    reply_headers.merge("Content-Length" => body.bytesize, "Connection" => "close").each { |k, v| reply << "#{k}: #{v}\r\n" }
    socket.write(reply << "\r\n" << body)
  end
end
